/**
 * The fault schedule — from a seed and a duration, the list of faults a chaos run injects: when,
 * which action, on which component, for how long. The same seed, duration and cluster shape give
 * the same list on every machine, so a failing run is replayed by its seed.
 * No upstream counterpart: upstream has no seeded fault injector in-tree. Its disruption tests
 * (test/e2e/chaosmonkey/chaosmonkey.go, test/e2e/cloud/gcp/restart.go, test/e2e/lifecycle) run
 * one hand-written disruption each; randomized schedules are the business of tools outside the
 * tree (Jepsen, chaos-mesh, Litmus).
 *
 * Solves:
 * - "what broke when" must be known before the run, not discovered from logs afterwards: the
 *   schedule is printed as it runs, each line the fault as planned and the process it hit;
 * - the leader is a moving target: a fault on "the leading scheduler" is planned as a role
 *   (`leader:kube-scheduler`) and resolved to a process from the Lease when it fires, so the plan
 *   does not depend on who won an election;
 * - the control plane is a chain (etcd ← API server ← leaders): two of its faults at once make a
 *   run whose failure no one can read, so by default a control-plane fault starts only after the
 *   previous one has ended and `settleMs` passed (`concurrentControlPlane` lifts that).
 *
 * Invariants:
 * - faults are sorted by `at`; every fault ends (`at + holdMs`) within the duration;
 * - no two faults on the same target overlap; without `concurrentControlPlane`, no two
 *   control-plane faults overlap, nor start within `settleMs` of the previous one's end;
 * - the schedule depends only on (seed, durationMs, the sorted component names and kinds, options).
 *
 * @upstream none — test tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go: the one-disruption framework this generalizes)
 * @chapter 08-cluster
 */
import { mulberry32 } from "../../../testing/random.ts";
import { formatDuration } from "../../cli/duration.ts";
import { controlPlaneKinds } from "./target.ts";

export type FaultAction = "kill" | "pause" | "restart" | "partition";

export interface Fault {
  /** ms since the start of the faults. */
  at: number;
  action: FaultAction;
  /** A component name, or `leader:<kind>` for the leading scheduler or controller-manager. */
  target: string;
  kind: string;
  /** kill: until the restart; pause: until SIGCONT; partition: until it heals; restart: 0. */
  holdMs: number;
}

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  /** Components to fault: name and kind (schedulers and controller-managers become their leader role). */
  components: { name: string; kind: string }[];
  /** Allow more than one control-plane fault at a time (default false). */
  concurrentControlPlane?: boolean;
  /** Gap between two fault starts, ms (default 4–12 s). */
  gapMs?: [number, number];
  /** How long a fault holds, ms (default 3–10 s). */
  holdMs?: [number, number];
  /** Quiet time after a control-plane fault ends before the next one (default 5 s). */
  settleMs?: number;
}

/** Which actions make sense for a kind: the API server is the hub, so it is never "partitioned from itself". */
export function actionsFor(kind: string): FaultAction[] {
  if (kind === "kube-apiserver") return ["kill", "pause", "restart"];
  // etcd's partition cuts the API server's connection to it.
  return ["kill", "pause", "restart", "partition"];
}

const leaderKinds = new Set(["kube-scheduler", "kube-controller-manager"]);

// #region generate
export function generateSchedule(o: ScheduleOptions): Fault[] {
  const rand = mulberry32(o.seed);
  const between = ([lo, hi]: [number, number]) => Math.round(lo + rand() * (hi - lo));
  const gap = o.gapMs ?? [4000, 12_000];
  const hold = o.holdMs ?? [3000, 10_000];
  const settle = o.settleMs ?? 5000;
  // Targets in a fixed order (sorted), whatever order the cluster listed them in.
  const targets = new Map<string, string>();
  for (const c of [...o.components].sort((a, b) => a.name.localeCompare(b.name)))
    targets.set(leaderKinds.has(c.kind) ? `leader:${c.kind}` : c.name, c.kind);
  const names = [...targets.keys()];
  const busyUntil = new Map<string, number>();
  let controlPlaneFreeAt = 0;
  const faults: Fault[] = [];
  let t = between(gap);
  while (t < o.durationMs) {
    const free = names.filter(
      (n) =>
        (busyUntil.get(n) ?? 0) <= t &&
        (o.concurrentControlPlane || !controlPlaneKinds.has(targets.get(n)!) || controlPlaneFreeAt <= t),
    );
    if (free.length === 0) {
      t = Math.min(...names.map((n) => Math.max(busyUntil.get(n) ?? 0, controlPlaneFreeAt)));
      continue;
    }
    const target = free[Math.floor(rand() * free.length)];
    const kind = targets.get(target)!;
    const actions = actionsFor(kind);
    const action = actions[Math.floor(rand() * actions.length)];
    let holdMs = action === "restart" ? 0 : between(hold);
    if (t + holdMs > o.durationMs) holdMs = o.durationMs - t;
    if (action !== "restart" && holdMs < hold[0] / 2) break; // too close to the end to mean anything
    faults.push({ at: t, action, target, kind, holdMs });
    busyUntil.set(target, t + holdMs + settle);
    if (controlPlaneKinds.has(kind)) controlPlaneFreeAt = t + holdMs + settle;
    t += between(gap);
  }
  return faults;
}
// #endregion generate

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** One line per fault, as the run prints it: `+12.3s kill -9 kube-scheduler-2 (leader), restart after 4.0s`. */
export function describeFault(f: Fault, resolved?: string): string {
  const who = f.target.startsWith("leader:") ? `${resolved ?? f.kind} (leader)` : f.target;
  switch (f.action) {
    case "kill":
      return `+${secs(f.at)} kill -9 ${who}, restart after ${secs(f.holdMs)}`;
    case "pause":
      return `+${secs(f.at)} SIGSTOP ${who}, SIGCONT after ${secs(f.holdMs)}`;
    case "partition":
      return `+${secs(f.at)} partition ${who} from ${f.kind === "etcd" ? "kube-apiserver" : "the API server"} for ${secs(f.holdMs)}`;
    case "restart":
      return `+${secs(f.at)} restart ${who}`;
  }
}

/** The command that replays a run: the same seed and duration give the same schedule. */
export function replayCommand(seed: number, durationMs: number, extra: string[] = []): string {
  return [
    "npm run cluster -- chaos",
    `--seed ${seed}`,
    `--duration ${formatDuration(durationMs)}`,
    ...extra,
  ].join(" ");
}
