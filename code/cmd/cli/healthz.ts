/**
 * Health endpoints — `/healthz`, `/livez`, `/readyz` of a control-plane component, each a list of
 * named checks answered in upstream's words: `ok`, or 500 with one `[+]`/`[-]` line a check.
 * Mirrors apiserver pkg/server/healthz/healthz.go (InstallPathHandler, handleRootHealth).
 *
 * Solves:
 * - a kubelet's liveness probe must restart a leader that can no longer renew its Lease
 *   (chapter 6: the elector's HealthzAdaptor is one of `/healthz`'s checks), and an operator
 *   must see which check failed without reading logs (`?verbose`, `/healthz/<check>`);
 * - kube-scheduler and kube-controller-manager answer alike, from one small table.
 *
 * Invariants:
 * - a path with no checks answers with the `ping` check alone, as upstream installs PingHealthz;
 * - a failed check's reason is withheld from the list (`reason withheld`), as upstream: the
 *   endpoint is often open to anyone, the reason may say too much; `/healthz/<name>` gives it.
 *
 * @upstream kubernetes/apiserver pkg/server/healthz/healthz.go (HealthChecker, PingHealthz, InstallPathHandler, handleRootHealth, adaptCheckToHandler)
 * @chapter 06-leader-election
 */

/** HealthChecker: a name and a check that is undefined when healthy. */
export interface HealthChecker {
  name(): string;
  check(): Error | undefined;
}

/** PingHealthz: always healthy. */
export const pingHealthz: HealthChecker = { name: () => "ping", check: () => undefined };

/** A named check from a function (healthz.NamedCheck). */
export function namedCheck(name: string, check: () => Error | undefined): HealthChecker {
  return { name: () => name, check };
}

export interface HealthReply {
  status: number;
  body: string;
}

// #region handle-root-health
/**
 * The answer for `url` if it is one of `paths`' endpoints (`/healthz`, `/healthz/ping`,
 * `/healthz?verbose`), else undefined (the caller serves its other paths).
 */
export function handleHealth(url: string, paths: Record<string, HealthChecker[]>): HealthReply | undefined {
  const [path, query = ""] = url.split("?");
  for (const [root, given] of Object.entries(paths)) {
    const checks = given.length > 0 ? given : [pingHealthz];
    const name = root.replace(/^\//, "");
    const single = checks.find((c) => path === `${root}/${c.name()}`);
    if (single) {
      const err = single.check();
      return err
        ? { status: 500, body: `internal server error: ${err.message}\n` }
        : { status: 200, body: "ok" };
    }
    if (path !== root && path !== `${root}/`) continue;
    const lines: string[] = [];
    let failed = false;
    for (const c of checks) {
      if (c.check()) {
        failed = true;
        lines.push(`[-]${c.name()} failed: reason withheld`);
      } else lines.push(`[+]${c.name()} ok`);
    }
    if (failed) return { status: 500, body: `${lines.join("\n")}\n${name} check failed\n` };
    const verbose = new URLSearchParams(query).has("verbose");
    return { status: 200, body: verbose ? `${lines.join("\n")}\n${name} check passed\n` : "ok" };
  }
  return undefined;
}
// #endregion handle-root-health
