/**
 * The container's own root — how a catalog program sees "/" when it runs as a container.
 * No upstream counterpart: a real container gets its root from a mount namespace and pivot_root.
 *
 * Solves:
 * - every container needs a private filesystem, so that `touch /tmp/unhealthy` in one pod does
 *   not flip another pod's health; without root we cannot pivot_root, so the process runtime gives
 *   each container a directory on the host and the shim (process-shim.ts) tells the program where
 *   it is. The programs name their files with container paths and ask `containerPath` for the host
 *   path.
 * - the same program run by hand (`npx tsx code/kubelet/runtime/images/web.ts`) has no shim:
 *   then the container root is the host's "/", so it behaves as a plain program.
 *
 * Invariants:
 * - `containerPath(p)` is always inside the container root: ".." cannot climb out of it, as it
 *   cannot climb out of a real container's "/".
 *
 * @upstream none — containers get their root from runc's pivot_root (opencontainers/runc libcontainer/rootfs_linux.go)
 * @chapter 07-kubelet
 */
import { join, posix } from "node:path";

/** What the shim leaves on globalThis for the program: its root on the host and its working dir. */
export interface ContainerRoot {
  /** The host directory that is the container's "/". */
  rootfs: string;
  /** The working directory as the container sees it (workingDir, default "/"). */
  cwd: string;
}

export const containerRootKey = Symbol.for("course.kubelet.container-root");

export function currentRoot(): ContainerRoot | undefined {
  return (globalThis as Record<symbol, unknown>)[containerRootKey] as ContainerRoot | undefined;
}

/** The working directory as the container sees it. */
export function containerCwd(): string {
  return currentRoot()?.cwd ?? process.cwd();
}

/** The host path of the container path `p` (absolute, or relative to the working directory). */
export function containerPath(p: string): string {
  const root = currentRoot();
  if (!root) return p;
  // Resolve in the container's own namespace first: posix.resolve never goes above "/".
  return join(root.rootfs, posix.resolve(root.cwd, p));
}
