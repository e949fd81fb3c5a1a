/**
 * Chapter 6: kube-controller-manager as an HA pair (then a relay of three), against one API
 * server, with short durations (lease 2 s, renew deadline 1.5 s, retry 0.5 s), running only the
 * serviceaccount controller (its work is visible: a new namespace gets its `default` account):
 * - only the leader starts controllers; the follower starts none (and holds no informers);
 * - `kill -9` of the leader → the follower leads once the lease runs out, and acts;
 * - SIGTERM of the leader → exit 0 but, as upstream's (no ReleaseOnCancel), the Lease is not
 *   released: a watch on it never sees an empty holder, and the follower waits out the lease.
 * - `kubectl describe lease` lists a `LeaderElection` Event per takeover.
 * Takeover times are printed beside their bounds; nothing asserts on time.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { Lease } from "../api/coordination.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { plainKubectlEnv, runKubectl } from "../apiserver/testing/kubectl-env.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { freePort } from "../testing/ports.ts";
import { waitFor } from "../testing/wait-for.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";

const file = new URL("./kube-controller-manager.ts", import.meta.url).pathname;
const durations = { lease: 2_000, renew: 1_500, retry: 500 };

interface Candidate {
  name: string;
  process: CommandProcess;
  identity: string;
  port: number;
}

/** GET over HTTPS, trusting the self-signed serving certificate. */
function httpsGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false }, (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describeWithTools("kube-controller-manager leader election", ["kubectl"], () => {
  let server: APIServer;
  let client: Clientset;
  const candidates: Candidate[] = [];

  let kubectlDir: string;
  let kubectlEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url });
    kubectlDir = await mkdtemp(join(tmpdir(), "kcm-le-kubectl-"));
    kubectlEnv = await plainKubectlEnv(kubectlDir, server.url);
  });
  afterAll(async () => {
    if (kubectlDir) await rm(kubectlDir, { recursive: true, force: true });
    for (const c of candidates) c.process.kill();
    client?.closeIdleConnections();
    await server?.close();
  });

  async function start(name: string): Promise<Candidate> {
    const port = await freePort();
    const process = startCommand(file, [
      `--master=${server.url}`,
      "--controllers=serviceaccount-controller",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      `--leader-elect-lease-duration=${durations.lease}ms`,
      `--leader-elect-renew-deadline=${durations.renew}ms`,
      `--leader-elect-retry-period=${durations.retry}ms`,
    ]);
    const candidate = { name, process, identity: "", port };
    candidates.push(candidate);
    await process.waitForStderr("Waiting to lead (lease kube-system/kube-controller-manager)");
    const m = /"Leader election candidate" identity="([^"]+)"/.exec(process.stderr());
    candidate.identity = m?.[1] ?? "";
    return candidate;
  }

  const lease = (): Promise<Lease> =>
    client.coordinationV1.leases("kube-system").get("kube-controller-manager");
  async function leadsAfter(c: Candidate, t0: number): Promise<number> {
    await waitFor(
      `${c.name} to hold the Lease`,
      async () => (await lease()).spec?.holderIdentity === c.identity,
    );
    return Date.now() - t0;
  }
  /** Creates a namespace and waits for the leader's serviceaccount controller to give it `default`. */
  async function controllersAct(ns: string): Promise<void> {
    await client.coreV1.namespaces().create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await waitFor(`${ns}'s default ServiceAccount`, () => client.coreV1.serviceAccounts(ns).get("default"));
  }
  const report = (what: string, ms: number, bound: string) =>
    console.log(`kube-controller-manager ${what}: ${ms} ms (${bound})`);

  it("only the leader runs controllers; kill -9 hands over after the lease; SIGTERM keeps the Lease", async () => {
    const a = await start("A");
    await leadsAfter(a, Date.now());
    await a.process.waitForStderr("Started 1 controller(s): serviceaccount-controller");
    const b = await start("B");
    await controllersAct("one");
    // The follower started nothing: no controller, hence no informer.
    expect(b.process.stderr()).not.toContain('"Starting controller"');
    // B's first try may still be under way on a loaded machine: wait for its verdict.
    await b.process.waitForStderr("lock is held by");
    // Leader and follower both pass /healthz, whose one check is the elector's.
    for (const c of [a, b]) {
      expect(await httpsGet(`https://127.0.0.1:${c.port}/healthz?verbose`)).toEqual({
        status: 200,
        body: "[+]leaderElection ok\nhealthz check passed\n",
      });
    }

    // kill -9 A: B waits out the lease it last saw, then starts the controllers itself.
    const killed = Date.now();
    a.process.child.kill("SIGKILL");
    const bLeads = await leadsAfter(b, killed);
    report(
      "kill -9 → follower leads",
      bLeads,
      `leaseDuration + retryPeriod = ${durations.lease + durations.retry} ms`,
    );
    await b.process.waitForStderr("Started 1 controller(s): serviceaccount-controller");
    await controllersAct("two");

    // SIGTERM B with C following: a clean exit, but the Lease keeps B's name until it expires.
    const c = await start("C");
    const holders: string[] = [];
    const list = await client.coordinationV1.leases("kube-system").list();
    const w = await client.coordinationV1.leases("kube-system").watch({
      resourceVersion: list.metadata.resourceVersion,
    });
    const watching = (async () => {
      for await (const e of w) {
        if (e.type === "BOOKMARK") continue;
        const holder = (e.object as Lease).spec?.holderIdentity ?? "";
        holders.push(holder);
        if (holder === c.identity) w.stop();
      }
    })();
    const termed = Date.now();
    b.process.child.kill("SIGTERM");
    expect(await b.process.waitForExit()).toBe(0);
    expect(b.process.stderr()).not.toContain("leaderelection lost");
    const cLeads = await leadsAfter(c, termed);
    await watching;
    report(
      "SIGTERM → follower leads",
      cLeads,
      `no release: up to leaseDuration + retryPeriod = ${durations.lease + durations.retry} ms`,
    );
    // Every write between the SIGTERM and C's takeover named B (its last renewals) or C: never "".
    expect(holders.at(-1)).toBe(c.identity);
    expect(holders.filter((h) => h !== b.identity && h !== c.identity)).toEqual([]);
    await c.process.waitForStderr("Started 1 controller(s): serviceaccount-controller");
    await controllersAct("three");
    c.process.child.kill("SIGTERM");
    expect(await c.process.waitForExit()).toBe(0);

    // Each takeover is an Event on the Lease from "kube-controller-manager"; B and C, stopped by
    // SIGTERM, said they stopped (A was killed: nothing flushed). kubectl finds them by the
    // Lease's name, namespace, kind and uid.
    const { out } = await runKubectl(kubectlEnv, [
      "describe",
      "lease",
      "-n",
      "kube-system",
      "kube-controller-manager",
    ]);
    const events = out.slice(out.indexOf("\nEvents:"));
    const event = (msg: string) =>
      new RegExp(`Normal\\s+LeaderElection\\s+\\S+\\s+kube-controller-manager\\s+${msg}\\n`);
    for (const x of [a, b, c]) expect(events).toMatch(event(`${x.identity} became leader`));
    for (const x of [b, c]) expect(events).toMatch(event(`${x.identity} stopped leading`));
    expect(events).not.toContain(`${a.identity} stopped leading`);
  }, 120_000);
});
