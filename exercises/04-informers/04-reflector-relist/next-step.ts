/**
 * Exercise: the reflector's next step — after a list or a watch ends, what does it do next?
 *
 * Resume the watch from the last resourceVersion seen, list again at that resourceVersion, list
 * at "" (the newest state), or back off first. README.md has the rules.
 */

/** What the reflector remembers between steps. */
export interface ReflectorState {
  /** The resourceVersion the last successful list returned ("" before the first list). */
  listResourceVersion: string;
  /** The last resourceVersion seen: the list's, or the last event's since (bookmarks too). */
  lastSyncResourceVersion: string;
}

/** How the last step ended. `code` is the HTTP code of the server's Status; 0 is "no answer". */
export type Outcome =
  /** The reflector starts: nothing listed yet. */
  | { type: "start" }
  /** A list answered, at this resourceVersion. */
  | { type: "listed"; resourceVersion: string }
  /** A list asked at `resourceVersion` failed. */
  | { type: "list-failed"; resourceVersion: string; code: number }
  /** The watch call itself was refused (no stream opened). */
  | { type: "watch-refused"; code: number }
  /** The stream sent an ERROR event carrying a Status with this code. */
  | { type: "watch-error-event"; code: number }
  /** The stream ended without an error (its timeout, a dropped connection). */
  | { type: "watch-closed"; durationMs: number; events: number };

/** What to do next, at which resourceVersion, and whether to wait a backoff before it. */
export interface Step {
  action: "list" | "watch";
  resourceVersion: string;
  backoff: boolean;
}

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  throw new Error(`TODO: nextStep(${JSON.stringify(state)}, ${outcome.type})`);
}
