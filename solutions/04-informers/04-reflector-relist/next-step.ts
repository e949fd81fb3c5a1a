// The reference answer. The course's reflector makes the same decisions inline in
// code/client/tools/cache/reflector.ts: `relistResourceVersion` and `list` (the 410 on a list),
// `watch` (refused watches, 429) and `handleWatch` (ERROR events, the very short watch); `run`
// waits the backoff before every new list-and-watch.
//
// A recorded mistake next to this file (wrong-*.ts) is this function with one rule done wrong: it
// handles one case itself and hands the rest to `reference`.
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

const tooManyRequests = 429;
const gone = 410;
const noAnswer = 0;

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  const last = state.lastSyncResourceVersion;
  switch (outcome.type) {
    case "start":
      // "0": any cached state will do; the watch catches up from there.
      return { action: "list", resourceVersion: "0", backoff: false };
    case "listed":
      return { action: "watch", resourceVersion: outcome.resourceVersion, backoff: false };
    case "list-failed":
      // Too old even for a list: the newest state, read from etcd, at once.
      if (outcome.code === gone && outcome.resourceVersion !== "") {
        return { action: "list", resourceVersion: "", backoff: false };
      }
      return { action: "list", resourceVersion: outcome.resourceVersion, backoff: true };
    case "watch-closed":
      // Closed at once with nothing in it: a proxy cutting streams, a server refusing. Re-watching
      // would spin; treat it as an error.
      if (outcome.durationMs < 1000 && outcome.events === 0) {
        return { action: "list", resourceVersion: last, backoff: true };
      }
      return { action: "watch", resourceVersion: last, backoff: false };
    case "watch-refused":
      if (outcome.code === tooManyRequests || outcome.code === noAnswer) {
        return { action: "watch", resourceVersion: last, backoff: true };
      }
      return { action: "list", resourceVersion: last, backoff: true };
    case "watch-error-event":
      if (outcome.code === tooManyRequests) return { action: "watch", resourceVersion: last, backoff: true };
      return { action: "list", resourceVersion: last, backoff: true };
  }
}

export const reference = nextStep;
