/**
 * Status — what a plugin says about a pod: a code, the reasons behind it, and (for a failure) the
 * plugin that said it.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/interface.go (Code, Status, NewStatus, AsStatus, IsRejected, AsError)
 * @chapter 05-scheduler
 *
 * Solves: every extension point answers the same question — may this pod go on, and if not, is
 * it worth trying again? — so the scheduling cycle, the queue and preemption all read one type.
 * The code decides what happens next: Unschedulable lets PostFilter (preemption) try,
 * UnschedulableAndUnresolvable tells it not to bother, Error is a bug or an outage, not the pod.
 *
 * Invariants:
 * - `undefined` (Go's nil) means Success: `codeOf(undefined) === Code.Success`. Plugins return
 *   `undefined` on the happy path so that no object is allocated per node.
 * - a Status made from an error (`asStatus`) has code Error and the error's message as its
 *   first reason.
 * - `isRejected` is true exactly for Unschedulable, UnschedulableAndUnresolvable and Pending:
 *   the pod goes back to the queue waiting for an event, not for an error's backoff.
 */

// #region codes
/** The order is upstream's (Go iota), so numeric codes match its logs and metrics. */
export enum Code {
  Success = 0,
  Error = 1,
  /** The pod does not fit now; preemption may make room. */
  Unschedulable = 2,
  /** The pod does not fit, and evicting pods would not change that (a node selector, a taint). */
  UnschedulableAndUnresolvable = 3,
  /** A Permit plugin holds the pod until it is allowed, rejected or times out. */
  Wait = 4,
  /** PreFilter / PreScore: skip this plugin's Filter / Score; Bind: let the next binder bind. */
  Skip = 5,
  /** The pod waits for something outside the scheduler (another pod, a claim being allocated). */
  Pending = 6,
}

export const codeNames: readonly string[] = [
  "Success",
  "Error",
  "Unschedulable",
  "UnschedulableAndUnresolvable",
  "Wait",
  "Skip",
  "Pending",
];
// #endregion codes

// #region status
export class Status {
  readonly code: Code;
  private readonly reasonList: string[];
  /** Set for code Error: the cause, kept so that `asError` returns the original error. */
  readonly err?: Error;
  /** The plugin that returned this status; set by the framework on rejections. */
  plugin = "";

  constructor(code: Code, reasons: string[] = [], err?: Error) {
    this.code = code;
    this.reasonList = reasons;
    this.err = err;
  }

  /** The error's message first (if any), then the reasons. */
  reasons(): string[] {
    return this.err ? [this.err.message, ...this.reasonList] : [...this.reasonList];
  }

  /** The reasons joined by ", " — the text of FailedScheduling's per-node counts. */
  message(): string {
    return this.reasons().join(", ");
  }

  appendReason(reason: string): void {
    this.reasonList.push(reason);
  }

  withPlugin(plugin: string): this {
    this.plugin = plugin;
    return this;
  }

  toString(): string {
    return this.message();
  }
}

export function newStatus(code: Code, ...reasons: string[]): Status {
  return new Status(code, reasons);
}

/** AsStatus: an error becomes an Error status; no error, no status (Success). */
export function asStatus(err: Error | undefined | null): Status | undefined {
  if (!err) return undefined;
  return new Status(Code.Error, [], err);
}

export const codeOf = (s: Status | undefined): Code => s?.code ?? Code.Success;
export const isSuccess = (s: Status | undefined): boolean => codeOf(s) === Code.Success;
export const isWait = (s: Status | undefined): boolean => codeOf(s) === Code.Wait;
export const isSkip = (s: Status | undefined): boolean => codeOf(s) === Code.Skip;

/** IsRejected: the pod cannot go on for a reason an event may change (not an error). */
export function isRejected(s: Status | undefined): boolean {
  const c = codeOf(s);
  return c === Code.Unschedulable || c === Code.UnschedulableAndUnresolvable || c === Code.Pending;
}

/** AsError: Success, Wait and Skip are not errors; the rest are, with the original cause if any. */
export function asError(s: Status | undefined): Error | undefined {
  if (!s || isSuccess(s) || isWait(s) || isSkip(s)) return undefined;
  return s.err ?? new Error(s.message());
}
// #endregion status

// #region merge
// Which code wins when several plugins answer for one node: an error hides everything (the
// result cannot be trusted), then "no eviction helps" beats "eviction may help" — otherwise
// preemption would evict pods for a node that a taint rules out anyway.
const precedence: Partial<Record<Code, number>> = {
  [Code.Error]: 3,
  [Code.UnschedulableAndUnresolvable]: 2,
  [Code.Unschedulable]: 1,
  [Code.Success]: -1,
};
const rank = (c: Code): number => precedence[c] ?? 0;

/**
 * Merges plugin statuses into one (PluginToStatus.Merge): the code by precedence Error >
 * UnschedulableAndUnresolvable > Unschedulable > the others (Wait, Skip, Pending) > Success, the
 * plugin of the winning status, every reason in order, and the error of an Error status.
 */
export function mergeStatuses(statuses: readonly (Status | undefined)[]): Status | undefined {
  if (statuses.length === 0) return undefined;
  let code = Code.Success;
  let plugin = "";
  let err: Error | undefined;
  const reasons: string[] = [];
  for (const s of statuses) {
    const c = codeOf(s);
    if (c === Code.Error) err = asError(s);
    if (rank(c) > rank(code)) {
      code = c;
      plugin = s?.plugin ?? "";
    }
    // The reasons alone: an Error status's message is carried by `err`, not repeated.
    if (s) reasons.push(...s.reasons().slice(s.err ? 1 : 0));
  }
  return new Status(code, reasons, err).withPlugin(plugin);
}
// #endregion merge
