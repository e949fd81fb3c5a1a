/**
 * Seeded randomness for tests, fuzzers and benchmarks: the same seed gives the same sequence on
 * every machine, so a failure found by one random run is replayed exactly by its seed.
 *
 * mulberry32 — a 32-bit state generator, small enough to read and fast enough for millions of
 * draws; not for anything that needs unpredictability (keys, tokens).
 *
 * @upstream none — test tooling (upstream Go tests use math/rand with a logged seed)
 * @chapter 01-etcd-watch
 */

/** A generator of numbers in [0, 1) for `seed`. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
