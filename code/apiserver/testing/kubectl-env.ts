/**
 * The kubectl tests' shared set-up against a plain-HTTP API server: a kubeconfig with no
 * credentials (the insecure port's user is system:unsecured), an environment that keeps kubectl's
 * cache and home inside the test's folder, and a runner that never throws.
 * No upstream counterpart: upstream's integration tests call the Go client, not the kubectl binary.
 *
 * @upstream none — course test tooling
 * @chapter 03-api-security
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

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

/** Runs kubectl with `env`; resolves with its output and exit code (20 s at most). */
export function runKubectl(
  env: NodeJS.ProcessEnv,
  args: string[],
): Promise<{ out: string; err: string; code: number }> {
  return new Promise((resolve) => {
    execFile("kubectl", args, { env, timeout: 20000 }, (error, out, err) => {
      resolve({ out, err, code: error ? ((error as { code?: number }).code ?? 1) : 0 });
    });
  });
}
