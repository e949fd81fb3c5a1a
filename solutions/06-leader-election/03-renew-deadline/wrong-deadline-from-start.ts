// Mistake: one deadline for the whole term — set when leading begins, never restarted after a
// successful renewal. Plausible: "renewDeadline is how long a leader may go on". But it is how long
// a leader may go on *failing*: with this version a healthy leader whose every renewal succeeds
// gives up renewDeadline after it started leading, and the component restarts every 10 seconds.
import { sleep } from "../../../code/client/util/clock.ts";
import type { RenewTiming } from "../../../code/leaderelection/leader-elector.ts";

export async function renewLoop(
  signal: AbortSignal,
  tryRenew: (signal: AbortSignal) => Promise<boolean>,
  { clock, renewDeadline, retryPeriod }: RenewTiming,
): Promise<string | undefined> {
  const round = new AbortController();
  const deadline = clock.afterFunc(renewDeadline, () => round.abort("context deadline exceeded"));
  while (!signal.aborted) {
    const cancel = () => round.abort("context canceled");
    signal.addEventListener("abort", cancel, { once: true });
    let renewed = false;
    try {
      while (!round.signal.aborted && !renewed) {
        renewed = await tryRenew(round.signal);
        if (!renewed) await sleep(clock, retryPeriod, round.signal);
      }
    } finally {
      signal.removeEventListener("abort", cancel);
    }
    if (signal.aborted) return undefined;
    if (!renewed) return String(round.signal.reason);
    await sleep(clock, retryPeriod, round.signal);
  }
  deadline.stop();
  return undefined;
}
