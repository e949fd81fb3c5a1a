/**
 * A ChaosTarget over the ClusterLauncher — what `npm run cluster -- chaos` breaks: the launcher
 * started with chaos's options (fault proxies, the audit policy, per-process tokens) gives every
 * member of the interface, the optional ones included.
 * No upstream counterpart: course tooling (upstream's chaosmonkey reaches its cluster through the
 * e2e framework, test/e2e/chaosmonkey/chaosmonkey.go).
 *
 * Invariants: `kill` resolves once the process is gone; `restart` once the new process runs (for
 * etcd and the API server: once it serves again, as the launcher's restart waits for).
 *
 * @upstream none — course tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go)
 * @chapter 08-cluster
 */
import { basename } from "node:path";
import { newForConfig } from "../../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../../client/tools/clientcmd/client-config.ts";
import type { ClusterLauncher } from "../launcher.ts";
import type { ChaosTarget } from "./target.ts";

// #region launcher-target
export function launcherTarget(l: ClusterLauncher): ChaosTarget {
  return {
    // None once the cluster is being stopped (a Ctrl-C): the runner's supervisor restarts nothing.
    components: () => (l.stopped ? [] : l.components().map(({ name, kind, pid }) => ({ name, kind, pid }))),
    kill: async (name) => {
      l.kill(name, "SIGKILL");
      await l.exited(name);
    },
    pause: async (name) => void l.pause(name),
    resume: async (name) => void l.resume(name),
    restart: async (name) => void (await l.restart(name)),
    partition: async (name, on) => l.partition(name, on),
    admin: l.admin,
    leaderIdentity: (name) => l.leaderIdentity(name),
    audit: () => l.audit(),
    kubeletRootDirs: () => l.kubeletRootDirs.map((rootDir) => ({ node: basename(rootDir), rootDir })),
    newClient: () => newForConfig(buildConfigFromFlags("", l.kubeconfig, {})),
  };
}
// #endregion launcher-target
