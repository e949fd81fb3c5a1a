// Mistake: the first failed renewal ends leadership — no retries within the deadline. Plausible:
// "we could not renew, so we are no longer sure we lead". But a single 503 or a dropped connection
// is routine; renewDeadline exists so that the leader keeps trying every retryPeriod, and steps
// down only when the outage outlasts it. This version flaps at every hiccup of the API server.
import { sleep } from "../../../code/client/util/clock.ts";
import type { RenewTiming } from "../../../code/leaderelection/leader-elector.ts";

export async function renewLoop(
  signal: AbortSignal,
  tryRenew: (signal: AbortSignal) => Promise<boolean>,
  { clock, renewDeadline, retryPeriod }: RenewTiming,
): Promise<string | undefined> {
  while (!signal.aborted) {
    // One round: a fresh deadline, so it runs from the round after the last success.
    const round = new AbortController();
    const cancel = () => round.abort("context canceled");
    signal.addEventListener("abort", cancel, { once: true });
    const deadline = clock.afterFunc(renewDeadline, () => round.abort("context deadline exceeded"));
    let renewed = false;
    try {
      while (!round.signal.aborted && !renewed) {
        renewed = await tryRenew(round.signal);
        if (!renewed) break;
      }
    } finally {
      deadline.stop();
      signal.removeEventListener("abort", cancel);
    }
    if (signal.aborted) return undefined;
    if (!renewed) return "failed to renew";
    await sleep(clock, retryPeriod, signal);
  }
  return undefined;
}
