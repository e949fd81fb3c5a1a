// The bad-input fuzz (testing/fuzz.ts, sent by testing/fuzz-run.ts): seeded malformed requests against one API server on the
// embedded store; any 5xx, reset connection or non-Status error fails, with the seed to replay.
// FUZZ_SEED picks the seed (default: a fixed one; `random` for a new one each run), FUZZ_COUNT the
// number of requests.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "./server.ts";
import { describeFailure, fuzz } from "./testing/fuzz-run.ts";

// A fixed default seed keeps `npm test` repeatable; FUZZ_SEED=random explores a new one each run.
const seed =
  process.env.FUZZ_SEED === "random"
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 2016402119);
const count = Number(process.env.FUZZ_COUNT ?? 200);

let server: APIServer;
beforeAll(async () => {
  server = await startAPIServer({ insecurePort: 0 });
});
afterAll(async () => {
  await server?.close();
});

it(`answers ${count} malformed requests with 4xx Statuses, never a 5xx (seed ${seed})`, {
  timeout: 120_000,
}, async () => {
  const started = Date.now();
  const failures = await fuzz(server.url, seed, count);
  const report = failures.slice(0, 20).map(describeFailure).join("\n");
  if (failures.length > 0) {
    console.error(
      `fuzz seed ${seed}: ${failures.length} of ${count} requests failed (replay with FUZZ_SEED=${seed})\n${report}`,
    );
  }
  expect(failures.length, `seed ${seed} (FUZZ_SEED=${seed} FUZZ_COUNT=${count} to replay)\n${report}`).toBe(
    0,
  );
  // The server still answers after the run.
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(120_000);
});
