/**
 * The chaos workload — a few Deployments of course/web, in a namespace of their own, scaled up and
 * down and rolled (a new image or environment) on a seeded schedule while the faults run, through
 * the admin's client. Every write it makes is recorded with its outcome, for the "no
 * acknowledged write lost" invariant.
 * No upstream counterpart as a tool; the role is upstream's disruption tests' "Test" half
 * (test/e2e/chaosmonkey/chaosmonkey.go: a test that runs Setup, then Test while the disruption
 * happens, then Teardown), and the writes are what `kubectl scale` / `kubectl set image` do.
 *
 * Solves:
 * - the cluster must be busy while it breaks: a controller-manager that dies with nothing to do
 *   proves nothing. Each step is a read-modify-write with the resourceVersion precondition,
 *   retried as a controller retries (re-read on 409 Conflict, back off on other errors) until the
 *   API server acknowledges it;
 * - a write whose answer never came (a killed API server, a timeout) may or may not have landed:
 *   it is recorded as `unknown`, not as lost and not as acknowledged — the invariant accepts it
 *   as what is there, but never in place of a later acknowledged write;
 * - the end state is known: `stop()` stops starting steps and finishes the one in flight, so each
 *   Deployment's desired replicas and template are what its last acknowledged write said.
 *
 * Invariants: one step at a time per workload (so each object's writes are recorded in the order
 * they were made); the step plan depends only on the seed.
 *
 * @upstream none — test tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go: Test's Setup/Test/Teardown; test/e2e/apps/deployment.go: scale and rollout steps)
 * @chapter 08-cluster
 */
import type { Deployment } from "../../../api/apps.ts";
import { isAlreadyExists, isConflict, isNotFound, StatusError } from "../../../client/errors.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import { mulberry32 } from "../../../testing/random.ts";
import type { DesiredDeployment, FinalObject, WriteRecord } from "./invariants.ts";

export interface WorkloadOptions {
  seed: number;
  namespace?: string;
  deployments?: number;
  /** Replicas are drawn from 0..maxReplicas (default 3). */
  maxReplicas?: number;
  /** Gap between two steps, ms (default 2–6 s). */
  gapMs?: [number, number];
  /** Per-request timeout, ms (default 10 s): a paused API server must not hang a step forever. */
  requestTimeoutMs?: number;
  log?: (line: string) => void;
}

const images = ["course/web:1.0", "course/web:latest"];

/** What a write sets, as a comparable string: the fields only the workload writes. */
export function fingerprint(d: Deployment): string {
  const c = d.spec.template.spec?.containers?.[0];
  const gen = c?.env?.find((e) => e.name === "CHAOS_GENERATION")?.value ?? "0";
  return `replicas=${d.spec.replicas ?? 1} image=${c?.image} generation=${gen}`;
}

function newDeployment(name: string, replicas: number): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [{ name: "web", image: images[0], env: [{ name: "CHAOS_GENERATION", value: "0" }] }],
        },
      },
    },
  };
}

/** Did the server certainly not apply it? An answer in 4xx (not a timeout) is a refusal; anything else may have landed. */
function refused(err: unknown): boolean {
  return err instanceof StatusError && err.code >= 400 && err.code < 500 && err.code !== 408;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Workload {
  readonly namespace: string;
  readonly writes: WriteRecord[] = [];
  private readonly names: string[];
  private readonly rand: () => number;
  private stopping = false;
  private aborted = false;
  private loop?: Promise<void>;
  /** Steps acknowledged, and attempts that failed (retried). */
  steps = 0;
  retries = 0;

  constructor(
    private readonly client: Clientset,
    private readonly o: WorkloadOptions,
  ) {
    this.namespace = o.namespace ?? "chaos-workload";
    this.names = Array.from({ length: o.deployments ?? 2 }, (_, i) => `web-${i}`);
    // Its own stream: the workload's plan does not shift when the fault schedule changes.
    this.rand = mulberry32((o.seed ^ 0x5bd1e995) >>> 0);
  }

  private call() {
    return { signal: AbortSignal.timeout(this.o.requestTimeoutMs ?? 10_000) };
  }

  /** Creates the namespace and the Deployments (1 replica each), retrying until acknowledged. */
  async setup(): Promise<void> {
    await this.retry("create namespace", async () => {
      await this.client.coreV1
        .namespaces()
        .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: this.namespace } }, this.call())
        .catch((e) => {
          if (!isAlreadyExists(e)) throw e;
        });
    });
    for (const name of this.names) {
      const d = newDeployment(name, 1);
      await this.retry(`create ${name}`, async () => {
        try {
          const made = await this.client.appsV1.deployments(this.namespace).create(d, this.call());
          this.record(name, "create", "ok", made);
        } catch (e) {
          if (isAlreadyExists(e)) return; // an earlier attempt whose answer was lost
          if (!refused(e)) this.record(name, "create", "unknown", d);
          throw e;
        }
      });
    }
  }

  /** Starts the seeded steps; they run until `stop()`. */
  start(): void {
    const [lo, hi] = this.o.gapMs ?? [2000, 6000];
    this.loop = (async () => {
      while (!this.stopping) {
        await sleep(lo + this.rand() * (hi - lo));
        if (this.stopping) break;
        const name = this.names[Math.floor(this.rand() * this.names.length)];
        const roll = this.rand() < 0.4;
        const replicas = Math.floor(this.rand() * ((this.o.maxReplicas ?? 3) + 1));
        await this.step(name, roll ? "roll" : "scale", replicas);
      }
    })();
  }

  /** Gives up at once, the step in flight too (a run that failed: nothing more to judge). */
  abort(): void {
    this.aborted = true;
    this.stopping = true;
  }

  /** No new step; the one in flight finishes (it retries until acknowledged). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }

  // #region step
  /** Read, modify, write with the resourceVersion precondition; again on 409, after a backoff on anything else. */
  private async step(name: string, op: "scale" | "roll", replicas: number): Promise<void> {
    await this.retry(`${op} ${name}`, async () => {
      const d = await this.client.appsV1.deployments(this.namespace).get(name, this.call());
      if (op === "scale") d.spec.replicas = replicas;
      else {
        const c = d.spec.template.spec!.containers[0];
        const gen = Number(c.env?.find((e) => e.name === "CHAOS_GENERATION")?.value ?? "0") + 1;
        c.env = [{ name: "CHAOS_GENERATION", value: String(gen) }];
        // Every other roll changes the image too (`kubectl set image`), the others only the env.
        if (gen % 2 === 0) c.image = images[(images.indexOf(c.image ?? "") + 1) % images.length];
      }
      try {
        const updated = await this.client.appsV1.deployments(this.namespace).update(d, this.call());
        this.record(name, op, "ok", updated);
        this.steps++;
        this.o.log?.(
          `workload: ${op} ${name} → ${fingerprint(updated)} (resourceVersion ${updated.metadata.resourceVersion})`,
        );
      } catch (e) {
        if (!refused(e)) this.record(name, op, "unknown", d);
        throw e;
      }
    });
  }
  // #endregion step

  private async retry(what: string, attempt: () => Promise<void>): Promise<void> {
    let backoff = 200;
    for (;;) {
      if (this.aborted) throw new Error(`workload aborted during ${what}`);
      try {
        await attempt();
        return;
      } catch (e) {
        this.retries++;
        if (isConflict(e)) continue; // someone else wrote: read again at once
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
        if (this.retries % 10 === 0) this.o.log?.(`workload: ${what} still failing: ${(e as Error).message}`);
      }
    }
  }

  private record(name: string, op: string, outcome: "ok" | "unknown", d: Deployment): void {
    this.writes.push({
      object: `${this.namespace}/${name}`,
      op,
      outcome,
      uid: outcome === "ok" ? d.metadata.uid : undefined,
      resourceVersion: outcome === "ok" ? d.metadata.resourceVersion : undefined,
      fingerprint: fingerprint(d),
      at: Date.now(),
    });
  }

  /** The replicas each Deployment was last told to have (its last acknowledged write). */
  desired(): DesiredDeployment[] {
    return this.names.map((name) => {
      const last = this.writes.findLast(
        (w) => w.object === `${this.namespace}/${name}` && w.outcome === "ok",
      );
      return { name, replicas: Number(/replicas=(\d+)/.exec(last?.fingerprint ?? "")?.[1] ?? 1) };
    });
  }

  /** Each Deployment as it is now (a fresh GET), for the acknowledged-writes check. */
  async finals(): Promise<Map<string, FinalObject | undefined>> {
    const out = new Map<string, FinalObject | undefined>();
    for (const name of this.names) {
      const key = `${this.namespace}/${name}`;
      let d: Deployment | undefined;
      await this.retry(`get ${name}`, async () => {
        d = await this.client.appsV1
          .deployments(this.namespace)
          .get(name, this.call())
          .catch((e) => {
            if (isNotFound(e)) return undefined;
            throw e;
          });
      });
      out.set(
        key,
        d && {
          uid: d.metadata.uid ?? "",
          resourceVersion: d.metadata.resourceVersion ?? "0",
          fingerprint: fingerprint(d),
        },
      );
    }
    return out;
  }

  /** The Deployments as they are now. */
  async deployments(): Promise<Deployment[]> {
    return (await this.client.appsV1.deployments(this.namespace).list(this.call())).items;
  }
}
