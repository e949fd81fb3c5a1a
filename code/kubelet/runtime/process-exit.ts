/**
 * How a process-runtime container ended — its exit code, reason and message from what is known:
 * the shim's record, the exit the runtime saw as the parent, or the signal it had sent.
 * Mirrors upstream's containerd/containerd internal/cri/server/events.go (handleContainerExit).
 *
 * Solves:
 * - a container's end is seen in different ways: the program exits by itself (the shim writes
 *   exit.json as it goes); the shim kills it for its memory limit (exit.json says OOMKilled);
 *   a signal ends it (no code of its own can run — the parent sees the signal, if the parent is
 *   still this runtime); or it died while no runtime watched and nothing was recorded. One pure
 *   function ranks these, so every path gives the kubelet the same answer.
 *
 * Invariants (the ranking, best knowledge first):
 * 1. exit.json from the shim — the code the program exited with, or 137/OOMKilled;
 * 2. the exit the runtime saw as the parent: a signal is 128 + its number (SIGTERM 143, SIGKILL 137);
 * 3. the last signal the runtime sent (StopContainer recorded it before sending): 128 + its number;
 * 4. nothing: exit code 255, reason "Unknown" — containerd's unknownExitCode/unknownExitReason for
 *    a container whose task is gone with no exit status.
 * - reason, when no record names one: "Completed" for 0, "Error" otherwise (containerd's
 *   completeExitReason/errorExitReason).
 *
 * @upstream containerd/containerd internal/cri/server/events.go (handleContainerExit: exit code and OOMKilled reason)
 * @upstream containerd/containerd internal/cri/server/helpers.go (errorStartExitCode, completeExitReason, errorExitReason, oomExitReason, unknownExitCode, unknownExitReason)
 * @chapter 07-kubelet
 */
import { constants } from "node:os";

export const errorStartExitCode = 128;
export const errorStartReason = "StartError";
export const completeExitReason = "Completed";
export const errorExitReason = "Error";
export const oomExitReason = "OOMKilled";
export const unknownExitCode = 255;
export const unknownExitReason = "Unknown";

/** What the shim records at exit (exit.json). */
export interface ExitRecord {
  exitCode: number;
  reason?: string;
  finishedAt: number;
}

export interface ExitStatus {
  exitCode: number;
  reason: string;
  message: string;
}

/** The container's exit status from the best evidence there is (see the ranking above). */
export function exitStatus(
  recorded: ExitRecord | undefined,
  observed: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  stopSignal: NodeJS.Signals | undefined,
): ExitStatus {
  let exitCode: number;
  if (recorded) {
    exitCode = recorded.exitCode;
    if (recorded.reason) return { exitCode, reason: recorded.reason, message: "" };
  } else if (observed?.signal) exitCode = 128 + constants.signals[observed.signal];
  else if (observed && observed.code !== null) exitCode = observed.code;
  else if (stopSignal) exitCode = 128 + constants.signals[stopSignal];
  else
    return {
      exitCode: unknownExitCode,
      reason: unknownExitReason,
      message: "the container's process ended while no runtime watched it, and left no exit status",
    };
  return { exitCode, reason: exitCode === 0 ? completeExitReason : errorExitReason, message: "" };
}
