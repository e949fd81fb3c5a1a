/**
 * The e2e framework — what every whole-cluster scenario of code/e2e/ does around its steps: a
 * namespace of its own (made with a generated name, deleted at the end, as upstream's
 * framework.NewDefaultFramework does for each test), the real kubectl that must succeed, a
 * manifest applied from a file, and waiting on a condition with the components' last log lines
 * when it times out.
 * Upstream: test/e2e/framework/framework.go (BeforeEach creates the namespace, AfterEach deletes
 * it) and test/e2e/framework/kubectl (RunKubectlOrDie).
 *
 * Solves:
 * - scenarios share one cluster per file: each works in its own namespace so a failing one
 *   leaves nothing that confuses the next, and the namespace's deletion cleans up after it;
 * - a timed-out wait on a loaded machine must say why: the last lines of every component.
 *
 * @upstream kubernetes/kubernetes test/e2e/framework/framework.go (Framework, BeforeEach, AfterEach)
 * @upstream kubernetes/kubernetes test/e2e/framework/kubectl/builder.go (RunKubectlOrDie)
 * @chapter 08-cluster
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import type { LocalCluster } from "../cmd/testing/local-cluster.ts";
import { waitFor } from "../testing/wait-for.ts";

let counter = 0;

/** The last lines of every component of the cluster, for a timeout's message. */
export function diagnostics(cluster: LocalCluster): string {
  const parts = [
    `--- kube-apiserver:\n${cluster.apiserver?.stderr().slice(-1500)}`,
    `--- kube-controller-manager:\n${cluster.controllerManager?.stderr().slice(-2500)}`,
    `--- kube-scheduler:\n${cluster.scheduler?.stderr().slice(-1000)}`,
    ...[...cluster.kubelets.values()].map(
      (k) => `--- kubelet ${k.name}:\n${k.process.stderr().slice(-1500)}`,
    ),
  ];
  return parts.join("\n");
}

/** One scenario's view of the cluster: its namespace, kubectl in it, and waiting. */
export interface Framework {
  ns: string;
  cluster: LocalCluster;
  /** kubectl in the scenario's namespace; the exit code must be 0; returns stdout. */
  kubectl(...args: string[]): Promise<string>;
  /** kubectl in the scenario's namespace, whatever its exit code. */
  tryKubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** `kubectl apply -f` of one object (its namespace is the scenario's). */
  apply(object: object): Promise<string>;
  /** Polls `check` until it answers; on a timeout, the components' last lines. */
  eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
}

/**
 * Creates a namespace `<base>-<n>` with kubectl, runs `body` in it, then deletes the namespace
 * (without waiting for it to go: the namespace controller finishes that in the background, as
 * upstream's framework does with its default deletion).
 */
export async function inNamespace(
  cluster: LocalCluster,
  base: string,
  body: (f: Framework) => Promise<void>,
): Promise<void> {
  const ns = `${base}-${process.pid}-${++counter}`;
  const created = await cluster.kubectl(["create", "namespace", ns]);
  expect(created.code, created.stderr).toBe(0);
  const f: Framework = {
    ns,
    cluster,
    async kubectl(...args) {
      const r = await cluster.kubectl([`--namespace=${ns}`, ...args], 300_000);
      expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
      return r.stdout;
    },
    tryKubectl: (...args) => cluster.kubectl([`--namespace=${ns}`, ...args], 300_000),
    async apply(object) {
      const file = join(cluster.dir, `${ns}-${++counter}.json`);
      await writeFile(file, JSON.stringify(object));
      return f.kubectl("apply", "-f", file);
    },
    eventually(what, check, timeoutMs = 180_000) {
      return waitFor(what, check, timeoutMs).catch((err: Error) => {
        throw new Error(`${err.message}\n${diagnostics(cluster)}`);
      });
    },
  };
  try {
    await body(f);
  } finally {
    await cluster.kubectl(["delete", "namespace", ns, "--wait=false", "--ignore-not-found"]);
  }
}
