/**
 * Component wiring for chaos — what both of chapter 8's clusters (the ClusterLauncher behind
 * `npm run cluster`, and the tests' LocalCluster) do to make a component process breakable and
 * tellable apart: its kubeconfig pointed at a FaultProxy of its own, a bearer token of its own
 * per process (so the audit log names the process, not just the component's user), the audit
 * log read back, and the leader-election identity a process logged. One module, imported by both.
 * No upstream counterpart: upstream's static token file (`--token-auth-file`, one line
 * `token,user,uid[,"group1,group2"]`) and the audit log are real; wiring a proxy per process is
 * test tooling (upstream's chaos tests use iptables).
 *
 * Invariants:
 * - a rewritten kubeconfig keeps the cluster's CA and its server name: the proxy listens on
 *   127.0.0.1, an IP the serving certificate always names (`--advertise-address` or not), so
 *   TLS verifies through it;
 * - token `n` of a component is `<component>-token-<n>` for user `system:<component>` with uid
 *   `<component>#<n>`: the audit event's `user.uid` says which process wrote.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go (NewCSV: the CSV format)
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (LeaderElectionConfig.Lock's Identity: what a candidate elects with)
 * @chapter 08-cluster
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Event as AuditEvent } from "../../apiserver/audit/event.ts";
import { FaultProxy } from "../../testing/fault-proxy.ts";

/** How many per-process tokens the token file holds for each component (restarts included). */
export const maxProcessTokens = 400;

/** The components that get per-process tokens: their leaders' writes are what chaos judges. */
export const tokenComponents = ["kube-scheduler", "kube-controller-manager"] as const;

// #region process-tokens
/** Writes the static token file (`--token-auth-file`): `maxProcessTokens` per component. */
export function writeProcessTokens(file: string): void {
  const lines: string[] = [];
  for (let i = 0; i < maxProcessTokens; i++)
    for (const component of tokenComponents)
      lines.push(`${component}-token-${i},system:${component},${component}#${i}`);
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
}

/**
 * A component's kubeconfig (its identity's, from the PKI) rewritten for one process: the server
 * at `proxyAddress` (`127.0.0.1:<port>`) when it has a proxy, and bearer token `token` of
 * `component` instead of the client certificate when it has one.
 */
export function componentKubeconfig(
  original: string,
  o: { proxyAddress?: string; component?: string; token?: number },
): string {
  let text = original;
  if (o.proxyAddress) text = text.replace(/server: https:\/\/\S+/, `server: https://${o.proxyAddress}`);
  if (o.token !== undefined && o.component)
    text = text.replace(
      /users:[\s\S]*$/,
      `users:\n- name: system:${o.component}\n  user:\n    token: ${o.component}-token-${o.token}\n`,
    );
  return text;
}
// #endregion process-tokens

/** Every audit event of a log file (JSON lines, every API server incarnation appending), in order. */
export function readAuditLog(file: string): AuditEvent[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: AuditEvent[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line) as AuditEvent);
    } catch {
      // a killed server's last line may be cut short
    }
  }
  return out;
}

/** The identity a scheduler or controller-manager process elects with, from its log's text. */
export function leaderIdentityIn(log: string): string | undefined {
  return /"Leader election candidate" identity="([^"]+)"/.exec(log)?.[1];
}

// #region wiring
/**
 * The ClusterLauncher's side of the wiring: one FaultProxy per component (the API server's
 * connections to etcd each through their member's), and the kubeconfig file each process starts
 * with — written again before every incarnation, so a restarted process (same command line, same
 * file) authenticates with a token of its own.
 */
export class ComponentWiring {
  private readonly proxies = new Map<string, FaultProxy>();
  private nextToken = 0;

  constructor(
    private readonly dir: string,
    readonly o: { faultProxies?: boolean; processTokens?: boolean },
  ) {}

  /** The address `name` should dial for `target` (`host:port`): its own proxy's, or the target's. */
  async dial(name: string, target: string): Promise<string> {
    if (!this.o.faultProxies) return target;
    const proxy = await FaultProxy.start(target);
    this.proxies.set(name, proxy);
    return proxy.address;
  }

  /** The kubeconfig file of process `name` (identity `component`'s, rewritten); call again per incarnation. */
  kubeconfig(name: string, component: string, original: string): string {
    const proxy = this.proxies.get(name);
    const token = this.o.processTokens && (tokenComponents as readonly string[]).includes(component);
    if (!proxy && !token) return original;
    mkdirSync(join(this.dir, "kubeconfigs"), { recursive: true });
    const file = join(this.dir, "kubeconfigs", `${name}.kubeconfig`);
    const text = componentKubeconfig(readFileSync(original, "utf8"), {
      proxyAddress: proxy?.address,
      component,
      token: token ? this.nextToken++ : undefined,
    });
    writeFileSync(file, text, { mode: 0o600 });
    return file;
  }

  get auditLog(): string {
    return join(this.dir, "audit.log");
  }

  /** The API server's flags for the token file and the audit log (files written now), when asked for. */
  apiServerArgs(auditPolicy?: string): string[] {
    const args: string[] = [];
    if (this.o.processTokens) {
      writeProcessTokens(join(this.dir, "tokens.csv"));
      args.push(`--token-auth-file=${join(this.dir, "tokens.csv")}`);
    }
    if (auditPolicy) {
      writeFileSync(join(this.dir, "audit-policy.yaml"), auditPolicy);
      args.push(
        `--audit-policy-file=${join(this.dir, "audit-policy.yaml")}`,
        `--audit-log-path=${this.auditLog}`,
      );
    }
    return args;
  }

  /** Cuts (or heals) the connections of `names` (drop: they hang, as in a network partition). */
  partition(names: string[], on: boolean): void {
    const proxies = names.map((n) => this.proxies.get(n)).filter((p) => p !== undefined);
    if (proxies.length === 0)
      throw new Error(`${names.join(", ")}: no fault proxy (start with faultProxies)`);
    for (const p of proxies) {
      if (on) p.drop();
      else p.pass();
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.proxies.values()].map((p) => p.stop().catch(() => {})));
  }
}
// #endregion wiring
