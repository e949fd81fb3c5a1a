/**
 * Solution: the renew loop — rounds of tries, each with its own deadline.
 */
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
        if (!renewed) await sleep(clock, retryPeriod, round.signal);
      }
    } finally {
      deadline.stop();
      signal.removeEventListener("abort", cancel);
    }
    if (signal.aborted) return undefined;
    if (!renewed) return String(round.signal.reason);
    await sleep(clock, retryPeriod, signal);
  }
  return undefined;
}
