/**
 * Stage timing — how long each gate of the request path takes inside the API server
 * (authentication, authorization, admission), for the secured API server benchmark
 * (apiserver.bench.ts). Off unless the benchmark's child process turns it on; then the
 * server wraps its authenticator, its request authorizer and its admission chain once at start
 * (server.ts, `withStageTiming`), and every call adds its elapsed time to a counter.
 * Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/metrics.go, and the others listed below.
 *
 * Solves: the benchmark sees only a request's total from outside; the cost of each gate
 * (a certificate check, an RBAC decision, the admission plugins) must be measured where it is
 * paid, or the secured run's slowdown cannot be attributed to a stage.
 *
 * Invariants:
 * - off (the default, and everywhere but the benchmark), nothing is wrapped: the request path
 *   is the learner's, unchanged, at no cost;
 * - on, each stage keeps a call count, a wall-time sum (`process.hrtime.bigint`) and a CPU-time
 *   sum (`process.cpuUsage`, one getrusage call at each end): a few additions per request. CPU
 *   time is the cost: on a shared machine the wall time also counts the moments the process
 *   waited for a core. Both may include a little work of other requests, when a stage awaits
 *   (admission's store reads) and their microtasks run meanwhile;
 * - the admission figure is the mutating plus the validating chain, the whole of the
 *   plugins' work for one write (a plugin's own store reads included).
 *
 * What upstream does differently: it measures these stages with Prometheus metrics —
 * `authentication_duration_seconds`, `apiserver_authorization_decisions_total` with
 * `apiserver_authorization_duration_seconds` (1.32's authorization metrics) and
 * `apiserver_admission_step_admission_duration_seconds` per step — always on, read at /metrics.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/metrics.go (authentication_duration_seconds)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go (apiserver_admission_step_admission_duration_seconds)
 * @chapter 03-api-security
 */
import type { AdmissionChain } from "../admission/chain.ts";
import type { Attributes as AdmissionAttributes } from "../admission/interfaces.ts";
import type { Authenticator } from "../authn/authenticator.ts";
import type { Authorizer } from "../authz/authorizer.ts";

export type Stage = "authn" | "authz" | "admission";

/** Per stage: calls, total wall nanoseconds and total CPU microseconds since the process started. */
export type StageTotals = Record<Stage, { calls: number; ns: number; cpuUs: number }>;

const totals: StageTotals = {
  authn: { calls: 0, ns: 0, cpuUs: 0 },
  authz: { calls: 0, ns: 0, cpuUs: 0 },
  admission: { calls: 0, ns: 0, cpuUs: 0 },
};
let enabled = false;

/** Turns stage timing on for servers started from now on (the benchmark's child only). */
export function enableStageTiming(): void {
  enabled = true;
}

/** A copy of the counters (the benchmark subtracts two snapshots to time one phase). */
export function stageTotals(): StageTotals {
  return structuredClone(totals);
}

async function timed<T>(stage: Stage, run: () => Promise<T>): Promise<T> {
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  try {
    return await run();
  } finally {
    const cpu = process.cpuUsage(cpu0);
    const total = totals[stage];
    total.calls++;
    total.ns += Number(process.hrtime.bigint() - t0);
    total.cpuUs += cpu.user + cpu.system;
  }
}

// #region with-stage-timing
/**
 * The server's gates, wrapped to time each call when timing is on; unchanged when it is off.
 * Only the request authorizer is wrapped: access reviews and escalation checks are not the gate.
 */
export function withStageTiming<C extends { authz: { authorizer?: Authorizer }; admission?: AdmissionChain }>(
  ctx: C,
  authenticator: Authenticator | undefined,
): { ctx: C; authenticator: Authenticator | undefined } {
  if (!enabled) return { ctx, authenticator };
  const authorizer = ctx.authz.authorizer;
  const chain = ctx.admission;
  const out = {
    ...ctx,
    authz: authorizer
      ? { ...ctx.authz, authorizer: { authorize: (a) => timed("authz", () => authorizer.authorize(a)) } }
      : ctx.authz,
    admission: chain ? timedChain(chain) : undefined,
  } as C;
  const authn: Authenticator | undefined = authenticator && {
    authenticateRequest: (req) => timed("authn", () => authenticator.authenticateRequest(req)),
  };
  return { ctx: out, authenticator: authn };
}
// #endregion with-stage-timing

/** The same chain, its admit and validate timed as one stage. */
function timedChain(chain: AdmissionChain): AdmissionChain {
  const timedOne = Object.create(chain) as AdmissionChain;
  timedOne.admit = (a: AdmissionAttributes) => timed("admission", () => chain.admit(a));
  timedOne.validate = (a: AdmissionAttributes) => timed("admission", () => chain.validate(a));
  return timedOne;
}
