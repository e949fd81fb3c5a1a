/**
 * What an idle kubelet costs the API server: one node's status loop and Lease controller for ten
 * (fake) minutes, every request counted from the API server's own request log. With upstream's
 * defaults: a Lease update (PUT) every 10 s, a Node GET every 10 s, a status PATCH only every 5 minutes.
 */
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { type Clock, FakeClock } from "../client/util/clock.ts";
import { startNodeStatusUpdater } from "./kubelet-node-status.ts";
import { type NodeLeaseController, startNodeLeaseController } from "./nodelease/controller.ts";
import { machineInfoFromCapacity } from "./nodestatus/setters.ts";

let server: APIServer;
let client: Clientset;
const requests: string[] = [];

beforeAll(async () => {
  server = await startAPIServer({ insecurePort: 0, log: (line) => requests.push(line) });
  client = newForConfig({ host: server.url, qps: 1000, burst: 1000 });
});
afterAll(async () => {
  await server?.close();
});

/** The FakeClock, counting the timers set and not yet fired: how a test knows both loops are parked. */
function countingClock(fake: FakeClock): Clock & { pending(): number } {
  let pending = 0;
  return {
    now: () => fake.now(),
    afterFunc(delayMs, fn) {
      pending++;
      const timer = fake.afterFunc(delayMs, () => {
        pending--;
        fn();
      });
      return {
        stop() {
          const stopped = timer.stop();
          if (stopped) pending--;
          return stopped;
        },
      };
    },
    pending: () => pending,
  };
}

it("an idle kubelet sends 12 requests a minute: 6 Lease updates, 6 Node GETs, and a status PATCH every 5 minutes", async () => {
  const fake = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const clock = countingClock(fake);
  const parked = (loops: number) =>
    vi.waitFor(() => expect(clock.pending()).toBe(loops), { timeout: 20_000, interval: 2 });
  const machine = machineInfoFromCapacity("idle", { cpu: "4", memory: "8Gi", "ephemeral-storage": "50Gi" });
  const common = { client, clock, nodeName: "idle", random: () => 0 };
  const updater = startNodeStatusUpdater({
    ...common,
    hostname: "idle",
    kubeletPort: 10250,
    machine,
    runtimeType: "fake",
  });
  let lease: NodeLeaseController | undefined;
  try {
    await parked(1);
    fake.step(100); // registration, then the first status write
    await parked(1);
    // Started once the Node exists (in the kubelet it starts at once and retries until then).
    lease = startNodeLeaseController(common);
    await parked(2);
    const start = requests.length;
    for (let period = 1; period <= 60; period++) {
      fake.step(10_000);
      await parked(2);
    }
    const window = requests.slice(start);
    const count = (re: RegExp) => window.filter((l) => re.test(l)).length;
    const leaseUpdates = count(
      /verb="UPDATE" URI="\/apis\/coordination\.k8s\.io\/v1\/namespaces\/kube-node-lease\/leases\/idle"/,
    );
    const nodeGets = count(/verb="GET" URI="\/api\/v1\/nodes\/idle\?resourceVersion=0"/);
    const statusPatches = count(/verb="PATCH" URI="\/api\/v1\/nodes\/idle\/status"/);
    // Ten minutes: 60 periods of 10 s.
    expect({ leaseUpdates, nodeGets, statusPatches, all: window.length }).toEqual({
      leaseUpdates: 60,
      nodeGets: 60,
      statusPatches: 2, // 5 and 10 minutes after the first write
      all: 122,
    });
  } finally {
    await updater.stop();
    await lease?.stop();
  }
}, 90_000);
