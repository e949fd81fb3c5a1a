/**
 * What the cluster launcher checks before it starts anything — a program that is missing (the
 * real etcd, kubemark), an `--advertise-address` no interface of this machine has — is one line
 * with the fix, not a component dying half-way — and the two
 * small helpers `npm run cluster` reports with (`which`, the last lines of a log).
 * No upstream counterpart: hack/local-up-cluster.sh checks its binaries the same way
 * (kube::util::find-binary, kube::etcd::validate) before starting them.
 *
 * @upstream kubernetes/kubernetes hack/lib/etcd.sh (kube::etcd::validate: etcd on PATH, with the fix)
 * @chapter 08-cluster
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { delimiter, join } from "node:path";
import { repoRoot, type StartOptions } from "./flags.ts";

export const cmdFile = (name: string) => join(repoRoot, "code", "cmd", `${name}.ts`);

/** A cluster that cannot start; the message is one line with the fix. */
export class LaunchError extends Error {
  override readonly name = "LaunchError";
}

/** The full path of `name` on PATH, or undefined. */
export function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** What would stop the cluster from starting, known before anything starts (a missing program). */
export function preflight(o: Omit<StartOptions, "viewPort" | "tracing">): LaunchError | undefined {
  if (o.fakeNodes > 0 && !existsSync(cmdFile("kubemark")))
    return new LaunchError(
      "--fake-nodes needs code/cmd/kubemark.ts (chapter 8's kubemark), which this checkout does not have",
    );
  if (o.advertiseAddress) {
    const here = localAddresses();
    if (!here.includes(o.advertiseAddress))
      return new LaunchError(
        `--advertise-address=${o.advertiseAddress}: no network interface of this machine has that address (it has ${here.join(", ")}); the API server could not listen there`,
      );
  }
  if (o.etcd === "real" && !which("etcd"))
    return new LaunchError(
      "--etcd=real: no etcd on PATH; install it (sudo apt-get install -y etcd-server) or drop --etcd=real",
    );
  return undefined;
}

/** Every address of this machine's network interfaces (loopback included). */
export function localAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => i.address);
}

/** The first IPv4 address of this machine that is not loopback (eth0's), or undefined. */
export function firstNonLoopbackIPv4(): string | undefined {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((i) => i.family === "IPv4" && !i.internal)?.address;
}

/** The last `n` lines of a file ("" if it cannot be read). */
export function tail(file: string, n: number): string {
  try {
    const text = readFileSync(file, "utf8");
    return text.trimEnd().split("\n").slice(-n).join("\n");
  } catch {
    return "";
  }
}
