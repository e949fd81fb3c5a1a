// Mistake: the deadline starts at the first failure, not at the start of the round — the timer is
// set when a try has come back false. Plausible: "the deadline is for failing, so count from the
// first failure". But a try that hangs never comes back to start the timer (and is never cut
// off), and a slow failure adds its own time: the leader steps down late, or never, while the
// followers' leaseDuration runs from the last renewal they saw.
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
    let deadline: { stop(): void } | undefined;
    let renewed = false;
    try {
      while (!round.signal.aborted && !renewed) {
        renewed = await tryRenew(round.signal);
        if (!renewed) {
          deadline ??= clock.afterFunc(renewDeadline, () => round.abort("context deadline exceeded"));
          await sleep(clock, retryPeriod, round.signal);
        }
      }
    } finally {
      deadline?.stop();
      signal.removeEventListener("abort", cancel);
    }
    if (signal.aborted) return undefined;
    if (!renewed) return String(round.signal.reason);
    await sleep(clock, retryPeriod, signal);
  }
  return undefined;
}
