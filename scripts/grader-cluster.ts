/**
 * The grader's cluster, seen from outside vitest: which exercises need it, the file that records
 * what it started, and the reaper that kills all of it when vitest itself was killed.
 *
 * Solves:
 * - chapter 8's exercises run against a live cluster; one cluster serves every variant of every
 *   such exercise in one vitest run (scripts/grader-cluster.setup.ts starts it), so the grader and
 *   the integrity test must know which variants need it;
 * - the grader stops vitest with SIGKILL (a learner's endless loop, Ctrl-C): vitest's globalSetup
 *   teardown never runs then. The components die with vitest's process group, but the kubelets'
 *   containers are process groups of their own on purpose (a restarted kubelet adopts them), so
 *   the setup records every pid and kubelet root dir in a state file, and runVariants reaps from it
 *   after each vitest process, whatever happened to it.
 *
 * Invariants:
 * - reapGraderCluster is synchronous (it runs in a process "exit" handler) and idempotent: it
 *   removes the state file and the cluster's folder, and a second call finds nothing to do;
 * - a container pid is killed only if its start token still matches (process-state.ts), never a
 *   stranger that reused the pid.
 *
 * @upstream none — course tooling
 * @chapter 08-cluster
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { ContainerRecord } from "../code/kubelet/runtime/process-state.ts";
import { isSameProcess, readRecords } from "../code/kubelet/runtime/process-state.ts";
import { root } from "./course.ts";

/** The chapters whose exercises are graded against the grader's live cluster. */
export const clusterChapters = ["08-cluster"];

/** Whether a test file (relative to the repository root, or absolute) belongs to a cluster exercise. */
export function needsCluster(testFile: string): boolean {
  return clusterChapters.some((ch) => testFile.includes(`exercises/${ch}/`));
}

/**
 * Whether a cluster exercise's test file uses the grader's shared cluster (useGraderCluster) —
 * 03-diagnose breaks components and starts a cluster of its own instead: a run of only such
 * files needs no shared cluster. An unreadable file is assumed to need it.
 */
export function usesGraderCluster(testFile: string): boolean {
  if (!needsCluster(testFile)) return false;
  const known = usesShared.get(testFile);
  if (known !== undefined) return known;
  let uses = true;
  try {
    uses = readFileSync(isAbsolute(testFile) ? testFile : join(root, testFile), "utf8").includes(
      "useGraderCluster(",
    );
  } catch {
    // unreadable: assume it does
  }
  usesShared.set(testFile, uses);
  return uses;
}
const usesShared = new Map<string, boolean>();

/**
 * A cluster exercise's test file may run this long: a pod must be scheduled, started and probed
 * on a loaded machine. The cluster's own start is not counted (it happens before any file starts).
 */
export const clusterTimeLimitMs = 300_000;

/**
 * A cluster exercise's test file that starts a cluster of its own (usesGraderCluster is false)
 * may run this long: its cluster's start is counted, and every variant of it starts one at once.
 */
export const ownClusterTimeLimitMs = 600_000;

/** What the setup writes as soon as each process starts: enough to kill everything from outside. */
export interface GraderClusterState {
  dir: string;
  pids: number[];
  kubeletRootDirs: string[];
}

/** The environment variable naming the state file (set by runVariants for each vitest process). */
export const stateEnv = "COURSE_CLUSTER_STATE";

export function writeGraderClusterState(file: string, state: GraderClusterState): void {
  writeFileSync(file, JSON.stringify(state));
}

/** Kills every component and container the state file names, and removes the cluster's folder. */
export function reapGraderCluster(file: string): void {
  if (!existsSync(file)) return;
  let state: GraderClusterState;
  try {
    state = JSON.parse(readFileSync(file, "utf8")) as GraderClusterState;
  } catch {
    rmSync(file, { force: true });
    return;
  }
  for (const pid of state.pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const root of state.kubeletRootDirs) {
    for (const rec of readRecords<ContainerRecord>(join(root, "runtime", "containers"))) {
      if (rec.pid === undefined || !isSameProcess(rec.pid, rec.startToken)) continue;
      try {
        // Each container leads its own process group: the group goes with it.
        process.kill(-rec.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  // The state file before the folder: removing the folder takes a while, and a second Ctrl-C may
  // end the process meanwhile; what is left then is files in the temporary folder, no process.
  rmSync(file, { force: true });
  if (state.dir) rmSync(state.dir, { recursive: true, force: true });
}
