/**
 * CycleState — the scratch space of one scheduling cycle: what PreFilter computed for Filter,
 * what PreScore computed for Score, keyed by the plugin's own key.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/cycle_state.go (CycleState, StateData, Read, Write, Delete, Clone, ErrNotFound)
 * @chapter 05-scheduler
 *
 * Solves: a plugin's PreFilter does the per-pod work once (the pod's requests, its spread
 * constraints' counts) and its Filter, run once per node, reads the result. The state must not
 * leak between pods, so each cycle gets a fresh CycleState; preemption clones it to try
 * "what if these pods were gone" without disturbing the real one.
 *
 * Invariants:
 * - `clone` clones every value through its own `clone()`, so a value changed by the copy
 *   (AddPod / RemovePod during preemption) never changes the original.
 * - `skipFilterPlugins` / `skipScorePlugins` name the plugins whose PreFilter / PreScore
 *   returned Skip this cycle.
 */

/** StateData: anything a plugin stores, as long as it can copy itself. */
export interface StateData {
  clone(): StateData;
}

export class NotFoundError extends Error {
  constructor() {
    super("not found");
  }
}

import type { Status } from "./status.ts";

/** explain (schedex): what the framework's loops report to (code/scheduler/explain.ts). */
export interface ExplainRecorder {
  recordFilter(skip: ReadonlySet<string>, nodeName: string, s: Status | undefined): void;
  /** One Score plugin's raw list; NormalizeScore then rewrites the same list in place. */
  recordScores(plugin: string, list: { name: string; score: number }[]): void;
}

// #region cycle-state
export class CycleState {
  private readonly storage = new Map<string, StateData>();
  /** Whether this cycle records plugin execution-time metrics (sampled, as upstream). */
  recordPluginMetrics = false;
  skipFilterPlugins = new Set<string>();
  skipScorePlugins = new Set<string>();
  /** explain (schedex): set only when the scheduler explains its decisions; clones leave it out. */
  explain?: ExplainRecorder;

  /** Read: the value at `key`, or ErrNotFound — a plugin whose PreFilter did not run fails loudly. */
  read(key: string): StateData | NotFoundError {
    return this.storage.get(key) ?? new NotFoundError();
  }

  write(key: string, value: StateData): void {
    this.storage.set(key, value);
  }

  delete(key: string): void {
    this.storage.delete(key);
  }

  clone(): CycleState {
    const c = new CycleState();
    for (const [k, v] of this.storage) c.storage.set(k, v.clone());
    c.recordPluginMetrics = this.recordPluginMetrics;
    c.skipFilterPlugins = new Set(this.skipFilterPlugins);
    c.skipScorePlugins = new Set(this.skipScorePlugins);
    return c;
  }
}
// #endregion cycle-state
