/**
 * Sending a benchmark's requests at a steady rate, as clusterloader2's `qpsLoad` tuning set does:
 * an open loop — request i is sent at its due time (t0 + i/qps) whatever the earlier ones'
 * answers, so a slow server shows up as latency, not as a slower offered load.
 * No upstream counterpart in the product: upstream's perf tests pace their load in test code.
 *
 * What upstream does differently: its qpsLoad sleeps 1/qps between starts (the sleeps' overshoot
 * adds up over thousands of actions) and lets any number run at once; here each is due at a fixed
 * instant, so the rate holds, and at most `maxInFlight` wait for answers (64 paced, 32 when all are
 * sent at once) — a bound on this one client process's sockets and memory, not on the server.
 *
 * @upstream kubernetes/perf-tests clusterloader2/pkg/tuningset/qps_load.go (qpsLoad.Execute)
 * @chapter 08-cluster
 */

/**
 * Runs `action(0)` … `action(count − 1)` at `qps` per second (0: as fast as `maxInFlight` allows)
 * and resolves when every one has settled; rejects with the first failure, as Promise.all.
 */
export async function qpsLoad(
  count: number,
  qps: number,
  action: (i: number) => Promise<unknown>,
  maxInFlight = qps > 0 ? 64 : 32,
): Promise<void> {
  const t0 = performance.now();
  let inFlight = 0;
  const slots: (() => void)[] = [];
  const sent: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    if (qps > 0) {
      const wait = t0 + (i * 1000) / qps - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    while (inFlight >= maxInFlight) await new Promise<void>((r) => slots.push(r));
    inFlight++;
    sent.push(
      action(i)
        .then(() => {})
        .finally(() => {
          inFlight--;
          slots.shift()?.();
        }),
    );
  }
  await Promise.all(sent);
}
