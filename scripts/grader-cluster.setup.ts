/**
 * The vitest globalSetup that starts ONE cluster for every chapter-8 exercise test of a run.
 *
 * Solves: chapter 8's exercises are graded against a live cluster, and every variant of every
 * such exercise (the learner's file, the solution, the stub, each recorded mistake) runs as a
 * project of one vitest process (scripts/variants.ts). A cluster per test file would be a dozen
 * clusters on a loaded machine; this setup starts one LocalCluster — kube-apiserver,
 * kube-controller-manager (--use-service-account-credentials), kube-scheduler and two kubelets on
 * the process runtime — before the first test file, hands its admin kubeconfig to the tests with
 * `provide` (code/cmd/testing/grader-cluster.ts injects it), and closes it after the last one.
 * Each test works in a namespace of its own, so variants running at once never meet.
 *
 * Invariants:
 * - no chapter-8 test that uses it in the run (useGraderCluster), no cluster: the setup returns at once;
 * - every process is recorded in the state file (scripts/grader-cluster.ts) the moment it starts,
 *   so the grader can kill all of it even when vitest is killed and this teardown never runs;
 * - the teardown closes the cluster whether the tests passed or failed.
 *
 * @upstream none — course tooling (upstream's e2e framework gets its cluster from a kubeconfig too:
 *   kubernetes/kubernetes test/e2e/framework/test_context.go, --kubeconfig)
 * @chapter 08-cluster
 */
import { appendFileSync, readFileSync, rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import type { GraderClusterInfo } from "../code/cmd/testing/grader-cluster.ts";
import { LocalCluster } from "../code/cmd/testing/local-cluster.ts";
import {
  type GraderClusterState,
  stateEnv,
  usesGraderCluster,
  writeGraderClusterState,
} from "./grader-cluster.ts";
import type { Variant } from "./variants.ts";
import type { ProgressLine } from "./variants-reporter.ts";

const nodes = ["node-1", "node-2"];

/** Tells the grader (through the results stream it already reads) how the cluster is doing. */
function progress(line: Extract<ProgressLine, { event: "cluster" }>): void {
  const out = process.env.COURSE_RESULTS;
  if (out) appendFileSync(out, `${JSON.stringify(line)}\n`);
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const spec = process.env.COURSE_VARIANTS;
  if (!spec) return undefined;
  const variants = JSON.parse(readFileSync(spec, "utf8")) as Variant[];
  if (!variants.some((v) => v.tests.some(usesGraderCluster))) return undefined;

  const stateFile = process.env[stateEnv];
  const state: GraderClusterState = { dir: "", pids: [], kubeletRootDirs: [] };
  const record = () => {
    if (stateFile) writeGraderClusterState(stateFile, state);
  };
  const startedAt = Date.now();
  progress({ event: "cluster", phase: "starting", at: startedAt });
  let cluster: LocalCluster;
  try {
    cluster = await LocalCluster.start({
      nodes,
      // Each controller as its own service account, as kubeadm runs it: the RBAC a learner's
      // objects meet is the real one.
      controllerManagerArgs: ["--use-service-account-credentials"],
      onProcess: (p) => {
        if (p.child.pid !== undefined) state.pids.push(p.child.pid);
        record();
      },
    });
  } catch (e) {
    progress({ event: "cluster", phase: "failed", at: Date.now(), message: String(e).slice(0, 2000) });
    throw e;
  }
  state.dir = cluster.dir;
  state.kubeletRootDirs = [...cluster.kubelets.values()].map((k) => k.rootDir);
  record();
  const info: GraderClusterInfo = { kubeconfig: cluster.adminKubeconfig, nodes };
  project.provide("graderCluster", info);
  progress({ event: "cluster", phase: "ready", at: Date.now(), ms: Date.now() - startedAt });

  return async () => {
    await cluster.close();
    if (stateFile) rmSync(stateFile, { force: true });
  };
}
