// The workqueue's promises, checked on random schedules: many workers with random processing
// times, keys added from outside at random moments, and workers that succeed, fail (rate-limited
// requeue), ask for a later look (addAfter) or requeue at once — all on a FakeClock, so a seed
// replays one schedule exactly. WORKQUEUE_SEED=<n> runs one seed.
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../testing/random.ts";
import { FakeClock, sleep } from "../clock.ts";
import { TokenBucket } from "../flowcontrol/token-bucket.ts";
import { newTypedDelayingQueueWithConfig } from "./delaying-queue.ts";
import {
  defaultQueue,
  type GetResult,
  newTypedWithConfig,
  type Queue,
  type TypedInterface,
} from "./queue.ts";
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type TypedRateLimiter,
} from "./rate-limiters.ts";
import { newTypedRateLimitingQueueWithConfig } from "./rate-limiting-queue.ts";

const BASE_MS = 5;
const MAX_MS = 2000;
const QPS = 20;
const BURST = 5;

interface Request {
  key: string;
  seq: number;
  time: number;
  readyAt: number;
  kind: "add" | "rateLimited" | "after";
}
interface Landing {
  key: string;
  seq: number;
  time: number;
  /** Made synchronously by one of the test's calls (add, or a delay <= 0), not by a timer. */
  immediate: boolean;
}
interface Start {
  key: string;
  seq: number;
  time: number;
}

/** Lets every pending promise continuation run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

async function runSchedule(seed: number): Promise<string[]> {
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const clock = new FakeClock(0);
  const violations: string[] = [];
  let seq = 0;
  let inCall = false;

  const requests: Request[] = [];
  const landings: Landing[] = [];
  const starts: Start[] = [];
  const bucketGrants: number[] = [];

  // The plain queue, watched: every add that reaches it is a landing, and every pop from its
  // order is the moment a worker takes the key (its continuation runs later, in a microtask).
  const held = new Set<string>();
  const fifo = defaultQueue<string>();
  const order: Queue<string> = {
    touch: (item) => fifo.touch(item),
    push: (item) => fifo.push(item),
    len: () => fifo.len(),
    pop() {
      const key = fifo.pop();
      if (held.has(key)) violations.push(`t=${clock.now()}: ${key} handed to a second worker`);
      held.add(key);
      starts.push({ key, seq: seq++, time: clock.now() });
      return key;
    },
  };
  const typed = newTypedWithConfig<string>({ queue: order });
  const watched: TypedInterface<string> = {
    add(item) {
      landings.push({ key: item, seq: seq++, time: clock.now(), immediate: inCall });
      typed.add(item);
    },
    len: () => typed.len(),
    get: (): Promise<GetResult<string>> => typed.get(),
    done: (item) => typed.done(item),
    shutDown: () => typed.shutDown(),
    shutDownWithDrain: () => typed.shutDownWithDrain(),
    shuttingDown: () => typed.shuttingDown(),
  };

  // The limiter, watched: the bucket's grants, to check the overall rate.
  const bucket = new BucketRateLimiter<string>(new TokenBucket(QPS, BURST, clock));
  const watchedBucket: TypedRateLimiter<string> = {
    when(item) {
      const d = bucket.when(item);
      bucketGrants.push(clock.now() + d);
      return d;
    },
    forget: (item) => bucket.forget(item),
    numRequeues: (item) => bucket.numRequeues(item),
  };
  const limiter = new MaxOfRateLimiter<string>(
    new ItemExponentialFailureRateLimiter<string>(BASE_MS, MAX_MS),
    watchedBucket,
  );
  const q = newTypedRateLimitingQueueWithConfig(limiter, {
    delayingQueue: newTypedDelayingQueueWithConfig({ clock, queue: watched }),
  });

  // The model's own count of failures since the last forget, per key.
  const failures = new Map<string, number>();
  const request = (key: string, kind: Request["kind"], delay = 0) => {
    const r: Request = {
      key,
      seq: seq++,
      time: clock.now(),
      readyAt: clock.now() + Math.max(0, delay),
      kind,
    };
    requests.push(r);
    return r;
  };

  const keys = Array.from({ length: 2 + int(8) }, (_, i) => `ns/k${i}`);
  const workers = 1 + int(6);
  const externalAdds = 10 + int(60);

  // Outside events (an informer's handlers) at random moments.
  for (let i = 0; i < externalAdds; i++) {
    const key = keys[int(keys.length)];
    clock.afterFunc(int(2000), () => {
      request(key, "add");
      inCall = true;
      q.add(key);
      inCall = false;
    });
  }

  const active = new Set<string>();
  const worker = async () => {
    for (;;) {
      const got = await q.get();
      if (got.shutdown) return;
      const key = got.item;
      if (active.has(key)) violations.push(`t=${clock.now()}: ${key} running in two workers`);
      active.add(key);
      await sleep(clock, int(4) === 0 ? 0 : int(60));
      const roll = rand();
      inCall = true;
      if (roll < 0.5) {
        q.forget(key);
        failures.delete(key);
      } else if (roll < 0.85) {
        const n = failures.get(key) ?? 0;
        failures.set(key, n + 1);
        const r = request(key, "rateLimited");
        const d = (() => {
          const before = bucketGrants.length;
          q.addRateLimited(key);
          // The delay asked for is the larger of the two limiters' answers.
          const fromBucket = bucketGrants[before] - r.time;
          return Math.max(Math.min(BASE_MS * 2 ** n, MAX_MS), fromBucket);
        })();
        r.readyAt = r.time + d;
        if (q.numRequeues(key) !== n + 1)
          violations.push(`${key}: numRequeues ${q.numRequeues(key)}, want ${n + 1}`);
      } else if (roll < 0.95) {
        const d = int(100);
        request(key, "after", d);
        q.addAfter(key, d);
      } else {
        request(key, "add");
        q.add(key);
      }
      inCall = false;
      active.delete(key);
      held.delete(key);
      q.done(key);
    }
  };
  const running = Array.from({ length: workers }, worker);

  // Drive the clock from timer to timer until nothing is left to happen.
  for (let steps = 0; ; steps++) {
    await settle();
    const due = clock.nextDue();
    if (due === undefined) break;
    if (steps > 100_000) {
      violations.push("the schedule never settled");
      break;
    }
    clock.setTime(due);
  }
  if (q.len() !== 0) violations.push(`${q.len()} items left queued with idle workers`);
  q.shutDown();
  await Promise.all(running);

  // Every start has a landing of its key after the previous start of that key (no processing
  // that nothing asked for).
  for (const key of keys) {
    const ks = starts.filter((s) => s.key === key);
    const kl = landings.filter((l) => l.key === key);
    let prev = -1;
    for (const s of ks) {
      if (!kl.some((l) => l.seq > prev && l.seq < s.seq))
        violations.push(`${key} processed at t=${s.time} with no add since its previous processing`);
      prev = s.seq;
    }
    // Every landing is followed by a processing that starts after it (no add lost).
    const lastStart = ks.at(-1)?.seq ?? -1;
    for (const l of kl)
      if (l.seq > lastStart) violations.push(`${key} added at t=${l.time} but never processed after it`);
    // Every request lands: an immediate one at once, a delayed one from the heap.
    const kr = requests.filter((r) => r.key === key);
    for (const r of kr.filter((r) => r.readyAt === r.time)) {
      const at = kl.find((l) => l.seq > r.seq);
      if (!at?.immediate || at.time !== r.time)
        violations.push(`${key}: ${r.kind} at t=${r.time} did not reach the queue at once`);
    }
    // A delayed landing comes exactly at the earliest ready time asked for since the previous
    // delayed landing — never sooner (the limiter's delay is respected), never later (the earlier
    // ask wins), and every delayed ask is answered by one.
    const delayed = kr.filter((r) => r.readyAt > r.time);
    const fromHeap = kl.filter((l) => !l.immediate);
    let from = -1;
    for (const l of fromHeap) {
      const asks = delayed.filter((r) => r.seq > from && r.seq < l.seq);
      if (asks.length === 0) violations.push(`${key} added by the heap at t=${l.time} with no delayed ask`);
      else {
        const want = Math.min(...asks.map((r) => r.readyAt));
        if (l.time !== want) violations.push(`${key} added by the heap at t=${l.time}, asked for t=${want}`);
      }
      from = l.seq;
    }
    const unanswered = delayed.filter((r) => r.seq > from);
    if (unanswered.length > 0)
      violations.push(`${key}: ${unanswered.length} delayed asks never reached the queue`);
  }

  // The overall bucket: over any span, at most BURST + QPS·span grants.
  for (let i = 0; i < bucketGrants.length; i++) {
    for (let j = i + BURST; j < bucketGrants.length; j++) {
      const allowed = BURST + (QPS * (bucketGrants[j] - bucketGrants[i])) / 1000 + 1e-6;
      if (j - i + 1 > allowed) {
        violations.push(`${j - i + 1} bucket grants within ${bucketGrants[j] - bucketGrants[i]} ms`);
        break;
      }
    }
  }
  if (starts.length === 0) violations.push("nothing was processed: the schedule tests nothing");
  return violations;
}

describe("workqueue properties on random schedules", () => {
  const one = process.env.WORKQUEUE_SEED;
  const seeds = one ? [Number(one)] : Array.from({ length: 300 }, (_, i) => i + 1);

  it(`never two workers on a key, no add lost, delays respected (${seeds.length} seeds)`, async () => {
    for (const seed of seeds) {
      const violations = await runSchedule(seed);
      expect(violations.slice(0, 5), `seed ${seed} (replay: WORKQUEUE_SEED=${seed})`).toEqual([]);
    }
  }, 60_000);
});
