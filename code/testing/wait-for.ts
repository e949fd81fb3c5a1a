/**
 * waitFor — the end-to-end tests' one way to wait for a cluster to reach a state: ask again every
 * 50 ms until the answer is a value (not `undefined`, not `false`), and give up after a deadline
 * with what was awaited and the last error seen. Controllers converge eventually, so a test that
 * drives them through kubectl cannot assert at once; it must not sleep a fixed time either (too
 * short fails under load, too long wastes every run).
 * No upstream counterpart in the product; upstream's integration tests use wait.PollUntilContextTimeout.
 *
 * @upstream kubernetes/apimachinery pkg/util/wait/poll.go (PollUntilContextTimeout: the same idea)
 * @chapter 04-informers
 */

/** Polls `check` until it returns a value; throws `timed out waiting for <what>` after `ms`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e; // a check may fail while the state is still forming (a 404 before the create lands)
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
