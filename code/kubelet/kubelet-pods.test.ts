import { describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { FakeClock } from "../client/util/clock.ts";
import type { PodStatus, Status } from "./container/runtime.ts";
import { generateAPIPodStatus } from "./kubelet-pods.ts";
import type { PodSandboxStatus } from "./runtime/cri.ts";
import { ReasonCache } from "./util/reason-cache.ts";

const clock = new FakeClock(0);
const pod = (extra: Partial<Pod["spec"]> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid: "u" },
  spec: {
    containers: [
      { name: "zeta", image: "z:1" },
      { name: "alpha", image: "a:1" },
    ],
    ...extra,
  },
});

const sandbox: PodSandboxStatus = {
  id: "sb",
  metadata: { name: "web", namespace: "default", uid: "u", attempt: 0 },
  state: "SANDBOX_READY",
  createdAt: 0,
  labels: {},
  annotations: {},
  runtimeHandler: "",
  network: { ip: "10.88.0.5" },
};

let seq = 0;
function container(name: string, state: Status["state"], extra: Partial<Status> = {}): Status {
  seq++;
  return {
    id: { type: "fake", id: `c${seq}` },
    name,
    state,
    createdAt: 1000 * seq,
    startedAt: 1000 * seq,
    finishedAt: state === "exited" ? 1000 * seq + 500 : 0,
    exitCode: 0,
    image: `${name}:1`,
    imageID: "sha256:x",
    imageRef: "sha256:x",
    hash: "",
    restartCount: 0,
    reason: state === "exited" ? "Completed" : "",
    message: "",
    ...extra,
  };
}

const runtimeStatus = (containerStatuses: Status[], sandboxes = [sandbox]): PodStatus => ({
  id: "u",
  name: "web",
  namespace: "default",
  ips: sandboxes.length ? ["10.88.0.5"] : [],
  containerStatuses,
  sandboxStatuses: sandboxes,
  timeStamp: 0,
});

describe("generateAPIPodStatus", () => {
  it("sorts app container statuses by name; state from the newest container, lastState from the one before", () => {
    const newest = container("zeta", "running", { restartCount: 1 });
    const older = container("zeta", "exited", { exitCode: 2, reason: "Error" });
    const s = generateAPIPodStatus(
      pod(),
      runtimeStatus([newest, older, container("alpha", "running")]),
      false,
      {
        reasonCache: new ReasonCache(),
        clock,
      },
    );
    expect(s.containerStatuses?.map((c) => c.name)).toEqual(["alpha", "zeta"]);
    const zeta = s.containerStatuses?.[1];
    expect(zeta?.state?.running).toBeDefined();
    expect(zeta?.restartCount).toBe(1);
    expect(zeta?.lastState?.terminated).toMatchObject({
      exitCode: 2,
      reason: "Error",
      containerID: "fake://c2",
    });
    expect(s.podIP).toBe("10.88.0.5");
    expect(s.phase).toBe("Running");
  });

  it("a container that was running and vanished from the runtime shows ContainerStatusUnknown as lastState", () => {
    const old = generateAPIPodStatus(
      pod(),
      runtimeStatus([container("zeta", "running"), container("alpha", "running")]),
      false,
      {
        reasonCache: new ReasonCache(),
        clock,
      },
    );
    const s = generateAPIPodStatus(pod(), runtimeStatus([container("alpha", "running")]), false, {
      reasonCache: new ReasonCache(),
      clock,
      oldPodStatus: old,
    });
    const zeta = s.containerStatuses?.find((c) => c.name === "zeta");
    expect(zeta?.lastState?.terminated).toMatchObject({ reason: "ContainerStatusUnknown", exitCode: 137 });
    expect(zeta?.restartCount).toBe(1);
  });

  it("never leaves a terminal phase, and keeps conditions the kubelet does not own", () => {
    const p = pod({ restartPolicy: "Always" });
    p.status = {
      phase: "Failed",
      reason: "Evicted",
      conditions: [{ type: "example.com/gate", status: "True" }],
    };
    const s = generateAPIPodStatus(
      p,
      runtimeStatus([container("zeta", "running"), container("alpha", "running")]),
      false,
      {
        reasonCache: new ReasonCache(),
        clock,
      },
    );
    expect(s.phase).toBe("Failed");
    expect(s.reason).toBe("Evicted");
    expect(s.conditions?.[0]).toEqual({ type: "example.com/gate", status: "True" });
  });

  it("lets the prober manager set ready before the conditions are computed", () => {
    const s = generateAPIPodStatus(
      pod(),
      runtimeStatus([container("zeta", "running"), container("alpha", "running")]),
      false,
      {
        reasonCache: new ReasonCache(),
        clock,
        updatePodStatus: (_p, st) => {
          for (const c of st.containerStatuses ?? []) c.ready = true;
        },
      },
    );
    expect(s.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  it("gives a host-network pod the node's IP, and every pod the host IPs", () => {
    const s = generateAPIPodStatus(pod({ hostNetwork: true }), runtimeStatus([], []), false, {
      reasonCache: new ReasonCache(),
      clock,
      nodeIPs: ["192.168.1.10"],
    });
    expect(s.podIP).toBe("192.168.1.10");
    expect(s.podIPs).toEqual([{ ip: "192.168.1.10" }]);
    expect(s.hostIPs).toEqual([{ ip: "192.168.1.10" }]);
  });

  it("shows the reason cache's error only for a container that will be restarted", () => {
    const rc = new ReasonCache();
    rc.add(
      "u",
      "zeta",
      "CrashLoopBackOff",
      "back-off 10s restarting failed container=zeta pod=web_default(u)",
    );
    const statuses = [
      container("zeta", "exited", { exitCode: 1, reason: "Error" }),
      container("alpha", "running"),
    ];
    const always = generateAPIPodStatus(pod(), runtimeStatus(statuses), false, { reasonCache: rc, clock });
    const zeta = always.containerStatuses?.find((c) => c.name === "zeta");
    expect(zeta?.state?.waiting?.reason).toBe("CrashLoopBackOff");
    expect(zeta?.lastState?.terminated?.exitCode).toBe(1);
    const never = generateAPIPodStatus(pod({ restartPolicy: "Never" }), runtimeStatus(statuses), false, {
      reasonCache: rc,
      clock,
    });
    expect(never.containerStatuses?.find((c) => c.name === "zeta")?.state?.terminated?.reason).toBe("Error");
  });
});
