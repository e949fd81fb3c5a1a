// Exercise 8.4: your plugin and your configuration become a second scheduler in the grader's live
// cluster. This test process is its binary — kube-scheduler's command with your plugin registered,
// `newSchedulerCommand(withPlugin(Name, New))`, as kubernetes-sigs/scheduler-plugins builds its
// own — started with your configuration file (`--config`) and a scheduler name of its own, beside
// the cluster's default scheduler. The nodes are labelled with their free disk (node-1 120 GB,
// node-2 480 GB); the test creates pods that ask for your scheduler and checks where they land, who
// says so in their events, that the default scheduler's pods are not yours, and which lock yours
// holds.
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event, Pod } from "../../../code/api/core.ts";
import { run } from "../../../code/cmd/cli/run.ts";
import { newSchedulerCommand, withPlugin } from "../../../code/cmd/kube-scheduler.ts";
import { eventually, useGraderCluster } from "../../../code/cmd/testing/grader-cluster.ts";
import type { ScorePlugin } from "../../../code/scheduler/framework/interface.ts";
import type { PluginFactory } from "../../../code/scheduler/framework/runtime/registry.ts";
import { freePort } from "../../../code/testing/ports.ts";
import {
  freeDiskLabel,
  Name,
  New,
  type SchedulerConfigurationFile,
  schedulerConfiguration,
} from "./free-disk.ts";

const cluster = useGraderCluster("scheduler-profile", { namespacePer: "file" });
/** Your scheduler's name in this run: the variants of a grading run each have their own. */
const schedulerName = `free-disk-${Math.random().toString(36).slice(2, 7)}`;
const freeDisk = { "node-1": "120", "node-2": "480" };
const mostFreeDisk = "node-2";

let dir = "";
let metricsPort = 0;
let log = "";
let exited: Promise<number> | undefined;
let exitCode: number | undefined;
/** Why your scheduler could not start (your configuration threw, or kube-scheduler refused it). */
let startError: Error | undefined;
/** Set once a pod of yours timed out unbound: the next waits are short, the reason is known. */
let stuck = false;
const signals = new EventEmitter();
/** How often the scheduler called your plugin's Score (the test wraps your factory to count). */
let scoreCalls = 0;
let pluginsMade = 0;

const counting: PluginFactory = (args, handle) => {
  const plugin = New(args, handle) as Partial<ScorePlugin>;
  pluginsMade++;
  const score = plugin.score;
  if (typeof score === "function")
    plugin.score = (...a: Parameters<ScorePlugin["score"]>) => {
      scoreCalls++;
      return score.apply(plugin, a);
    };
  return plugin as ScorePlugin;
};
const logTail = () => log.split("\n").slice(-12).join("\n");

beforeAll(async () => {
  try {
    await startYourScheduler();
  } catch (e) {
    // Each test reports it: a scheduler that does not start fails the tests, it is not a crash.
    startError = e as Error;
  }
}, 180_000);

/**
 * The grader's cluster is shared: a scheduler of yours electing on a Lease that another scheduler
 * holds right now would wait for it — or take it, and the other would exit ("Leaderelection
 * lost"). Such a configuration is refused before it starts, with the holder's name.
 */
async function refuseAHeldLock(le: SchedulerConfigurationFile["leaderElection"]): Promise<void> {
  if (le?.leaderElect === false) return;
  const ns = le?.resourceNamespace || "kube-system";
  const name = le?.resourceName || "kube-scheduler";
  const lease = await cluster.admin.coordinationV1
    .leases(ns)
    .get(name)
    .catch(() => undefined);
  const holder = lease?.spec?.holderIdentity;
  const renewed = Date.parse(lease?.spec?.renewTime ?? "");
  const live = renewed + (lease?.spec?.leaseDurationSeconds ?? 0) * 1000 > Date.now();
  if (holder && live)
    throw new Error(
      `your scheduler would elect on Lease ${ns}/${name}, held right now by ${holder}: it would wait for it forever, or take it and stop that scheduler — a scheduler needs a lock of its own`,
    );
}

/** Every test starts with this: your scheduler runs, or the test fails with the reason. */
function yourSchedulerRuns(): void {
  if (startError) throw startError;
}

async function startYourScheduler(): Promise<void> {
  for (const [node, gb] of Object.entries(freeDisk)) {
    const r = await cluster.kubectl(["label", "node", node, `${freeDiskLabel}=${gb}`, "--overwrite"]);
    if (r.code !== 0) throw new Error(`kubectl label node ${node}: ${r.stderr}`);
  }
  dir = mkdtempSync(join(tmpdir(), "scheduler-profile-"));
  const config = join(dir, "scheduler-config.yaml");
  // JSON is YAML: the file kube-scheduler reads is exactly what your function returned.
  const file = schedulerConfiguration(schedulerName);
  writeFileSync(config, JSON.stringify(file, null, 2));
  await refuseAHeldLock(file.leaderElection);
  metricsPort = await freePort();
  const args = [
    `--config=${config}`,
    `--kubeconfig=${cluster.info.kubeconfig}`,
    `--secure-port=${metricsPort}`,
    "--bind-address=127.0.0.1",
    // Durations only (a loaded machine renews late); the lock itself is your configuration's.
    "--leader-elect-lease-duration=60s",
    "--leader-elect-renew-deadline=40s",
    "--leader-elect-retry-period=2s",
  ];
  const append = (t: string) => {
    log += t;
  };
  const io = { stdout: append, stderr: append };
  exited = run(newSchedulerCommand(withPlugin(Name, counting)), args, io, {
    source: signals,
    exit: () => {},
  }).then((code) => {
    exitCode = code;
    return code;
  });
  await eventually(
    "your scheduler to start (its informers synced)",
    async () => log.includes('"Caches are synced"') || exitCode !== undefined,
    120_000,
    logTail,
  );
  if (exitCode !== undefined)
    throw new Error(`your scheduler did not start (exit ${exitCode}):\n${logTail()}`);
}

afterAll(async () => {
  signals.emit("SIGTERM", "SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
  if (dir) rmSync(dir, { recursive: true, force: true });
  await cluster.admin.coordinationV1
    .leases("kube-system")
    .delete(schedulerName)
    .catch(() => undefined);
}, 60_000);

const pods = () => cluster.admin.coreV1.pods(cluster.namespace);
const podFor = (name: string, scheduler?: string, nodeSelector?: Record<string, string>): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: cluster.namespace },
  spec: {
    ...(scheduler ? { schedulerName: scheduler } : {}),
    ...(nodeSelector ? { nodeSelector } : {}),
    terminationGracePeriodSeconds: 1,
    containers: [{ name: "app", image: "course/sleeper" }],
  },
});
async function eventsOf(pod: string): Promise<Event[]> {
  const list = await cluster.admin.coreV1.events(cluster.namespace).list();
  return list.items.filter((e) => e.involvedObject.name === pod);
}
const describeEvents = (events: Event[]) =>
  events.map((e) => `${e.reason} from ${e.source?.component}: ${e.message}`).join(" | ") || "no events";

/** Waits for `name` to be bound; the failure says what the events and your scheduler's log say. */
async function boundNode(name: string): Promise<string> {
  let events: Event[] = [];
  const node = eventually(
    `pod ${name} (schedulerName ${schedulerName}) to be bound to a node`,
    async () => {
      const p = await pods().get(name);
      if (p.spec.nodeName) return p.spec.nodeName;
      events = await eventsOf(name);
      return undefined;
    },
    stuck ? 20_000 : 90_000,
    () => `its events: ${describeEvents(events)}; your scheduler's log ends with:\n${logTail()}`,
  );
  node.catch(() => {
    stuck = true;
  });
  return node;
}

function metrics(): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port: metricsPort, path: "/metrics", rejectUnauthorized: false }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

describe("your scheduler, beside the cluster's own", () => {
  it(`places its pods on the node with the most free disk (${mostFreeDisk}, ${freeDisk[mostFreeDisk]} GB)`, async () => {
    yourSchedulerRuns();
    for (const name of ["disk-1", "disk-2", "disk-3"]) {
      await pods().create(podFor(name, schedulerName));
      const node = await boundNode(name);
      expect(
        node,
        `pod ${name} went to ${node}; FreeDisk scored nodes ${scoreCalls} times (${pluginsMade} plugin(s) made): is it enabled at score in the profile ${schedulerName}?`,
      ).toBe(mostFreeDisk);
    }
    expect(
      scoreCalls,
      `your plugin's Score never ran: registering a plugin (withPlugin) makes it known; only the profile's plugins.score enables it`,
    ).toBeGreaterThan(0);
  }, 240_000);

  it("says so in the pods' events: Scheduled, from your scheduler's name", async () => {
    yourSchedulerRuns();
    const name = "disk-events";
    await pods().create(podFor(name, schedulerName));
    const node = await boundNode(name);
    const scheduled = await eventually(
      `a Scheduled event for ${name}`,
      async () => (await eventsOf(name)).find((e) => e.reason === "Scheduled"),
      30_000,
    );
    expect(scheduled.source?.component, "the event's source is the profile's schedulerName").toBe(
      schedulerName,
    );
    expect(scheduled.message).toBe(`Successfully assigned ${cluster.namespace}/${name} to ${node}`);
  }, 150_000);

  it("leaves the default scheduler's pods alone", async () => {
    yourSchedulerRuns();
    // A default-scheduler pod no node can take stays Pending, so every scheduler that thinks it is
    // its own tries it. Then one of yours: your queue takes pods in the order they came (same
    // priority), so once yours is bound, your scheduler has met the default one.
    await pods().create(podFor("default-pod", undefined, { "course.dev/no-such-node": "true" }));
    await pods().create(podFor("disk-after", schedulerName));
    await boundNode("disk-after");
    const attempts = (await metrics())
      .split("\n")
      .filter(
        (l) =>
          l.startsWith("scheduler_schedule_attempts_total{") && !l.includes(`profile="${schedulerName}"`),
      );
    expect(
      attempts,
      `your scheduler tried pods of other profiles (its /metrics): the cluster's scheduler already serves default-scheduler — two schedulers for one name race for the same pods`,
    ).toEqual([]);
  }, 150_000);

  it("elects its leader on a Lease of its own, not the default scheduler's", async () => {
    yourSchedulerRuns();
    const m = /"Leader election candidate" identity="([^"]+)"/.exec(log);
    expect(
      m,
      "your scheduler does not elect a leader (leaderElection.leaderElect): two replicas of it would both schedule",
    ).not.toBeNull();
    const identity = m?.[1] ?? "";
    const held = await eventually(
      `the Lease held by your scheduler (${identity})`,
      async () => {
        const leases = await cluster.admin.coordinationV1.leases("kube-system").list();
        const mine = leases.items.filter((l) => l.spec?.holderIdentity === identity);
        return mine.length > 0 ? mine : undefined;
      },
      60_000,
    );
    const names = held.map((l) => `${l.metadata.namespace}/${l.metadata.name}`);
    expect(
      names,
      "your scheduler holds kube-system/kube-scheduler, the default scheduler's lock: nobody held it here, so yours got it; in a kubeadm cluster (its scheduler elects) yours would wait for it forever — or take it, and the default scheduler would stop",
    ).not.toContain("kube-system/kube-scheduler");
  }, 90_000);
});
