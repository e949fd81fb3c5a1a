/**
 * The kubectl tests' shared set-up against a plain-HTTP API server: a kubeconfig with no
 * credentials (the insecure port's user is system:unsecured), an environment that keeps kubectl's
 * cache and home inside the test's folder; the kubectl runner the tests share (it never throws:
 * the exit code is in the result; options for stdin, time limit and binary), and its variant for
 * steps that must succeed; and, for the tests that run components as their PKI identities, an
 * HTTPS + RBAC server with kubectl as admin.
 * No upstream counterpart: upstream's integration tests call the Go client, not the kubectl binary.
 *
 * @upstream none — course test tooling
 * @chapter 03-api-security
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { PKIError } from "../../pki/errors.ts";
import { freePort } from "../../testing/ports.ts";
import { type APIServer, type APIServerOptions, startAPIServer } from "../server.ts";

/** Writes `dir/kubeconfig` for `serverURL` and returns the environment kubectl should run with. */
export async function plainKubectlEnv(dir: string, serverURL: string): Promise<NodeJS.ProcessEnv> {
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: mini, cluster: {server: "${serverURL}"}}]`,
      "contexts: [{name: mini, context: {cluster: mini, user: me, namespace: default}}]",
      "current-context: mini",
      "users: [{name: me, user: {}}]",
      "",
    ].join("\n"),
  );
  return { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, "cache"), HOME: dir };
}

/** What one kubectl run printed, and how it ended. */
export interface KubectlResult {
  out: string;
  err: string;
  /** kubectl's exit code; 1 when it could not start or was killed at the time limit. */
  code: number;
}

/** What a test may change about a run (the defaults suit a kubectl against a local server). */
export interface KubectlRunOptions {
  /** Written to kubectl's stdin, which is then closed (`create -f -`); `""` only closes it. */
  stdin?: string;
  /** How long kubectl may run before it is killed; 20 s unless given, 0 for no limit. */
  timeoutMs?: number;
  /** The binary to run; `kubectl` from PATH unless given (e.g. the path external-tools found). */
  kubectl?: string;
}

/**
 * Runs kubectl with `env`; resolves with its output and exit code and never rejects, so a test
 * can assert on a refusal as on a success. The third argument is `stdin` alone, or the options.
 */
export function runKubectl(
  env: NodeJS.ProcessEnv,
  args: string[],
  stdinOrOptions?: string | KubectlRunOptions,
): Promise<KubectlResult> {
  const options = typeof stdinOrOptions === "string" ? { stdin: stdinOrOptions } : (stdinOrOptions ?? {});
  return new Promise((resolve) => {
    const child = execFile(
      options.kubectl ?? "kubectl",
      args,
      { env, timeout: options.timeoutMs ?? 20_000 },
      (error, out, err) => {
        // An exit code is a number; a failed start has a string code (ENOENT), a kill none.
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ out, err, code });
      },
    );
    // Without `stdin` the pipe stays open: nothing but `-f -` reads it, and that is given stdin.
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  });
}

/** runKubectl for a step that must succeed: resolves with stdout, throws `kubectl <args>: <stderr>` otherwise. */
export async function kubectlOK(
  env: NodeJS.ProcessEnv,
  args: string[],
  stdinOrOptions?: string | KubectlRunOptions,
): Promise<string> {
  const r = await runKubectl(env, args, stdinOrOptions);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.err || `exit code ${r.code}`}`);
  return r.out;
}

// #region secured-cluster
/**
 * An API server over HTTPS with RBAC and a fresh PKI in its own temporary folder, and kubectl
 * as the PKI's `admin` against it: the set-up the scheduler's kubectl tests share (one per test
 * file, in beforeAll; `close()` in afterAll, harmless if the start failed half-way).
 */
export interface SecuredKubectlCluster {
  dir: string;
  server: APIServer;
  layout: PKILayout;
  /** kubectl's environment: the admin kubeconfig, cache and home inside `dir`. */
  env: NodeJS.ProcessEnv;
  /** The kubeconfig of one of the PKI's identities (`kube-scheduler`, `admin`, …). */
  kubeconfigOf(id: string): string;
  /** Runs kubectl as admin, `stdin` piped in (for `create -f -`); never throws. */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /** Stops the server and removes `dir`. */
  close(): Promise<void>;
}

/** Starts the server (`extra` added to its options: admission, logging) in `mkdtemp(prefix)`. */
export async function startSecuredKubectlCluster(
  prefix: string,
  extra: Partial<APIServerOptions> = {},
): Promise<SecuredKubectlCluster> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  let server: APIServer | undefined;
  try {
    const port = await freePort();
    const pki = await ensurePKI({
      dir,
      server: `https://127.0.0.1:${port}`,
      encryptionAlgorithm: "ECDSA-P256",
    });
    if (pki instanceof PKIError) throw pki;
    const layout = pki.layout;
    server = await startAPIServer({
      securePort: port,
      secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
      authentication: { clientCAFile: layout.caCert },
      authorizationModes: ["RBAC"],
      ...extra,
    });
    const kubeconfigOf = (id: string) => {
      const k = layout.identities.find((i) => i.id === id)?.kubeconfig;
      if (!k) throw new Error(`the PKI has no identity ${id}`);
      return k;
    };
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfigOf("admin"),
      KUBECACHEDIR: join(dir, "cache"),
      HOME: dir,
    };
    const running = server;
    return {
      dir,
      server: running,
      layout,
      env,
      kubeconfigOf,
      kubectl: (args, stdin) => runKubectl(env, args, stdin),
      close: async () => {
        await running.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
// #endregion secured-cluster
