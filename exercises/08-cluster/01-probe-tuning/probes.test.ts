// Exercise 8.1: your probes on a real Deployment in the grader's live cluster. course/web starts
// listening only after --start-delay seconds; the tests watch its pod start (never killed, Ready
// only once it listens), stop being ready (/tmp/unready: it must leave the Ready condition, so a
// Service sends it no traffic) and hang (/tmp/unhealthy: it must be restarted within the bound).
// Every wait allows for a loaded machine; the bounds your probes must meet are in the messages.
import { beforeAll, describe, expect, it } from "vitest";
import type { Deployment } from "../../../code/api/apps.ts";
import type { Pod } from "../../../code/api/core.ts";
import { eventually, useGraderCluster } from "../../../code/cmd/testing/grader-cluster.ts";
import { type AppTimings, type ContainerProbes, probesFor } from "./probes.ts";

const app: AppTimings = { port: 8080, startDelaySeconds: 8, restartWithinSeconds: 20 };
/** What the kubelet, the API server and a busy machine add to what the probes take. */
const slackSeconds = 25;

const cluster = useGraderCluster("probe-tuning", { namespacePer: "file" });
let probes: ContainerProbes;

beforeAll(() => {
  probes = probesFor(app);
});

const condition = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type);
const isReady = (pod: Pod) => condition(pod, "Ready")?.status === "True";
const status = (pod: Pod) => pod.status?.containerStatuses?.find((c) => c.name === "app");
const restarts = (pod: Pod) => status(pod)?.restartCount ?? 0;

let pod: Pod | undefined;
async function thePod(): Promise<Pod | undefined> {
  const list = await cluster.admin.coreV1.pods(cluster.namespace).list({ labelSelector: "app=slow-web" });
  pod = list.items.find((p) => !p.metadata.deletionTimestamp);
  return pod;
}
const where = () =>
  pod
    ? `phase ${pod.status?.phase}, Ready ${condition(pod, "Ready")?.status}, restarts ${restarts(pod)}, state ${JSON.stringify(status(pod)?.state)}, last ${JSON.stringify(status(pod)?.lastState)}`
    : "no pod yet";

async function exec(...command: string[]): Promise<void> {
  const r = await cluster.kubectl([
    "-n",
    cluster.namespace,
    "exec",
    pod?.metadata.name ?? "",
    "-c",
    "app",
    "--",
    ...command,
  ]);
  if (r.code !== 0) throw new Error(`kubectl exec ${command.join(" ")}: exit ${r.code}: ${r.stderr}`);
}

describe(`a slow starter (${app.startDelaySeconds} s) with your probes, in the live cluster`, () => {
  it("is never killed while it starts, and becomes Ready only once it listens", async () => {
    const deployment: Deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "slow-web", namespace: cluster.namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "slow-web" } },
        template: {
          metadata: { labels: { app: "slow-web" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: "app",
                image: "course/web",
                args: [`--port=${app.port}`, `--start-delay=${app.startDelaySeconds}`],
                ports: [{ containerPort: app.port }],
                ...probes,
              },
            ],
          },
        },
      },
    };
    await cluster.admin.appsV1.deployments(cluster.namespace).create(deployment);
    const ready = await eventually(
      "the pod to be Ready",
      async () => {
        const p = await thePod();
        if (p && restarts(p) > 0) {
          throw new Error(
            `the app was killed while it was starting (restartCount ${restarts(p)}): ${where()}`,
          );
        }
        return p && isReady(p) ? p : undefined;
      },
      (app.startDelaySeconds + 60 + slackSeconds) * 1000,
      where,
    );
    // Ready may not come before the app listens: a Service would send it traffic it cannot serve.
    const started = Date.parse(status(ready)?.state?.running?.startedAt ?? "");
    const readyAt = Date.parse(condition(ready, "Ready")?.lastTransitionTime ?? "");
    expect(
      (readyAt - started) / 1000,
      "seconds from the container's start to Ready: it was Ready before it listened",
    ).toBeGreaterThanOrEqual(app.startDelaySeconds - 1);
  }, 300_000);

  it("leaves the Ready condition when it says it is not ready, and comes back", async () => {
    expect(pod && isReady(pod), "the pod never became Ready").toBe(true);
    await exec("touch", "/tmp/unready");
    await eventually(
      "the pod to leave Ready after /readyz answered 503 (a readiness probe on /readyz?)",
      async () => {
        const p = await thePod();
        return p && !isReady(p);
      },
      (10 + slackSeconds) * 1000,
      where,
    );
    await exec("rm", "/tmp/unready");
    await eventually(
      "the pod to be Ready again",
      async () => {
        const p = await thePod();
        return p && isReady(p);
      },
      (10 + slackSeconds) * 1000,
      where,
    );
    expect(restarts(pod!), "a pod that is only not ready must not be restarted").toBe(0);
  }, 300_000);

  it(`is restarted within ${app.restartWithinSeconds} s when it hangs`, async () => {
    expect(pod && isReady(pod), "the pod is not Ready").toBe(true);
    await exec("touch", "/tmp/unhealthy");
    await eventually(
      `the hung app to be restarted (within ${app.restartWithinSeconds} s, + ${slackSeconds} s for a busy machine)`,
      async () => {
        const p = await thePod();
        return p && restarts(p) >= 1;
      },
      (app.restartWithinSeconds + slackSeconds) * 1000,
      where,
    );
  }, 300_000);
});
