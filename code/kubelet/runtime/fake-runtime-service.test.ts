import { describe, expect, it } from "vitest";
import { FakeClock } from "../../client/util/clock.ts";
import {
  type ContainerConfig,
  KubernetesContainerNameLabel,
  KubernetesPodNameLabel,
  KubernetesPodUIDLabel,
  type PodSandboxConfig,
} from "./cri.ts";
import { CodeExitError, isNotFound } from "./cri-errors.ts";
import { type FakeImageBehaviour, FakeImageService } from "./fake-image-service.ts";
import { exitCodeSIGKILL, exitCodeSIGTERM, FakeRuntimeService } from "./fake-runtime-service.ts";

const start = 1_700_000_000_000;

function setup(images: Record<string, FakeImageBehaviour> = { "web:1": {} }) {
  const clock = new FakeClock(start);
  const imageService = new FakeImageService();
  for (const [name, b] of Object.entries(images)) imageService.preload(name, b);
  return { clock, images: imageService, runtime: new FakeRuntimeService(clock, imageService) };
}

function sandboxConfig(name: string, uid = `uid-${name}`): PodSandboxConfig {
  return {
    metadata: { name, uid, namespace: "default", attempt: 0 },
    labels: { [KubernetesPodNameLabel]: name, [KubernetesPodUIDLabel]: uid },
  };
}

function containerConfig(name: string, image: string, attempt = 0): ContainerConfig {
  return { metadata: { name, attempt }, image: { image }, labels: { [KubernetesContainerNameLabel]: name } };
}

/** Runs a sandbox with one started container of `image`; returns both ids. */
async function runPod(runtime: FakeRuntimeService, name: string, image: string) {
  const sb = sandboxConfig(name);
  const podSandboxId = await runtime.RunPodSandbox(sb);
  const containerId = await runtime.CreateContainer(podSandboxId, containerConfig("app", image), sb);
  await runtime.StartContainer(containerId);
  return { podSandboxId, containerId };
}

describe("FakeRuntimeService", () => {
  it("runs a sandbox and moves a container CREATED → RUNNING → EXITED with the clock's times", async () => {
    const { clock, runtime, images } = setup();
    const sb = sandboxConfig("web-0");
    const podSandboxId = await runtime.RunPodSandbox(sb);
    const sandbox = await runtime.PodSandboxStatus(podSandboxId);
    expect(sandbox.state).toBe("SANDBOX_READY");
    expect(sandbox.createdAt).toBe(start * 1e6);
    expect(sandbox.network.ip).toBe("10.88.0.1");
    expect(sandbox.labels[KubernetesPodNameLabel]).toBe("web-0");

    clock.step(1000);
    const id = await runtime.CreateContainer(podSandboxId, containerConfig("app", "web:1"), sb);
    let status = await runtime.ContainerStatus(id);
    expect(status).toMatchObject({
      state: "CONTAINER_CREATED",
      createdAt: (start + 1000) * 1e6,
      startedAt: 0,
    });
    expect(status.imageRef).toBe(images.refOf("web:1"));

    clock.step(1000);
    await runtime.StartContainer(id);
    status = await runtime.ContainerStatus(id);
    expect(status).toMatchObject({
      state: "CONTAINER_RUNNING",
      startedAt: (start + 2000) * 1e6,
      finishedAt: 0,
    });
    await expect(runtime.StartContainer(id)).rejects.toThrow(
      `failed to set starting state for container "${id}": container is in CONTAINER_RUNNING state`,
    );

    clock.step(1000);
    await runtime.StopContainer(id, 0);
    status = await runtime.ContainerStatus(id);
    expect(status).toMatchObject({
      state: "CONTAINER_EXITED",
      finishedAt: (start + 3000) * 1e6,
      exitCode: exitCodeSIGKILL,
      reason: "Error",
    });

    await runtime.RemoveContainer(id);
    expect(await runtime.ListContainers()).toEqual([]);
    await runtime.StopPodSandbox(podSandboxId);
    expect((await runtime.PodSandboxStatus(podSandboxId)).state).toBe("SANDBOX_NOTREADY");
    await runtime.RemovePodSandbox(podSandboxId);
    expect(await runtime.ListPodSandbox()).toEqual([]);
  });

  it("exits a container on its image's timer, with its exit code and reason", async () => {
    const { clock, runtime } = setup({
      "crash:1": { exitAfterMs: 3000, exitCode: 1 },
      "job:1": { exitAfterMs: 500 },
    });
    const crash = await runPod(runtime, "crash", "crash:1");
    const job = await runPod(runtime, "job", "job:1");

    clock.step(500);
    expect(await runtime.ContainerStatus(job.containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 0,
      reason: "Completed",
    });
    clock.step(2499);
    expect((await runtime.ContainerStatus(crash.containerId)).state).toBe("CONTAINER_RUNNING");
    clock.step(1);
    expect(await runtime.ContainerStatus(crash.containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 1,
      reason: "Error",
      finishedAt: (start + 3000) * 1e6,
    });
    // Exited containers leave no timers behind.
    expect(clock.hasWaiters()).toBe(false);
  });

  it("stops with a timeout: SIGTERM honoured in time gives 143, ignored gives SIGKILL's 137 at the timeout", async () => {
    const { clock, runtime } = setup({ "graceful:1": { sigtermExitAfterMs: 2000 }, "stubborn:1": {} });
    const graceful = await runPod(runtime, "graceful", "graceful:1");
    const stubborn = await runPod(runtime, "stubborn", "stubborn:1");

    let gracefulDone = false;
    let stubbornDone = false;
    const g = runtime.StopContainer(graceful.containerId, 30).then(() => (gracefulDone = true));
    const s = runtime.StopContainer(stubborn.containerId, 30).then(() => (stubbornDone = true));

    clock.step(1999);
    await Promise.resolve();
    expect(gracefulDone).toBe(false);
    clock.step(1);
    await g;
    expect(await runtime.ContainerStatus(graceful.containerId)).toMatchObject({ exitCode: exitCodeSIGTERM });

    clock.step(27_999);
    await Promise.resolve();
    expect(stubbornDone).toBe(false);
    expect((await runtime.ContainerStatus(stubborn.containerId)).state).toBe("CONTAINER_RUNNING");
    clock.step(1);
    await s;
    expect(await runtime.ContainerStatus(stubborn.containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: exitCodeSIGKILL,
      finishedAt: (start + 30_000) * 1e6,
    });
    // Stopping again is a no-op, not an error.
    await runtime.StopContainer(stubborn.containerId, 30);
  });

  it("a slow SIGTERM handler is cut short by the timeout", async () => {
    const { clock, runtime } = setup({ "slow:1": { sigtermExitAfterMs: 10_000 } });
    const pod = await runPod(runtime, "slow", "slow:1");
    const stopped = runtime.StopContainer(pod.containerId, 2);
    clock.step(2000);
    await stopped;
    expect((await runtime.ContainerStatus(pod.containerId)).exitCode).toBe(exitCodeSIGKILL);
  });

  it("filters ListContainers and ListPodSandbox by id, sandbox, state and labels", async () => {
    const { runtime } = setup({ "web:1": {}, "job:1": {} });
    const a = await runPod(runtime, "a", "web:1");
    const b = await runPod(runtime, "b", "web:1");
    const sbB = sandboxConfig("b");
    const created = await runtime.CreateContainer(b.podSandboxId, containerConfig("sidecar", "job:1"), sbB);
    await runtime.StopPodSandbox(a.podSandboxId);

    const ids = (cs: { id: string }[]) => cs.map((c) => c.id).sort();
    expect(ids(await runtime.ListContainers({ podSandboxId: b.podSandboxId }))).toEqual(
      [b.containerId, created].sort(),
    );
    expect(ids(await runtime.ListContainers({ state: "CONTAINER_RUNNING" }))).toEqual([b.containerId]);
    expect(ids(await runtime.ListContainers({ state: "CONTAINER_EXITED" }))).toEqual([a.containerId]);
    expect(
      ids(await runtime.ListContainers({ labelSelector: { [KubernetesContainerNameLabel]: "sidecar" } })),
    ).toEqual([created]);
    expect(ids(await runtime.ListContainers({ id: a.containerId }))).toEqual([a.containerId]);
    expect(await runtime.ListContainers({ id: a.containerId, state: "CONTAINER_RUNNING" })).toEqual([]);

    expect(ids(await runtime.ListPodSandbox({ state: "SANDBOX_READY" }))).toEqual([b.podSandboxId]);
    expect(ids(await runtime.ListPodSandbox({ labelSelector: { [KubernetesPodNameLabel]: "a" } }))).toEqual([
      a.podSandboxId,
    ]);
    expect(ids(await runtime.ListPodSandbox({ id: b.podSandboxId }))).toEqual([b.podSandboxId]);
  });

  it("answers unknown ids with NotFound, except from the idempotent removes", async () => {
    const { runtime } = setup();
    const missing = "f".repeat(64);
    for (const call of [
      () => runtime.ContainerStatus(missing),
      () => runtime.StartContainer(missing),
      () => runtime.StopContainer(missing, 10),
      () => runtime.ExecSync(missing, ["true"], 1000),
      () => runtime.PodSandboxStatus(missing),
      () => runtime.StopPodSandbox(missing),
      () => runtime.CreateContainer(missing, containerConfig("app", "web:1"), sandboxConfig("x")),
    ]) {
      const err = await call().then(
        () => undefined,
        (e) => e,
      );
      expect(isNotFound(err), String(err)).toBe(true);
    }
    expect((await runtime.ContainerStatus(missing).catch((e) => e)).message).toBe(
      `rpc error: code = NotFound desc = an error occurred when try to find container "${missing}": not found`,
    );
    await runtime.RemoveContainer(missing);
    await runtime.RemovePodSandbox(missing);
  });

  it("will not create a container from an image that is not on the node", async () => {
    const { runtime, images } = setup();
    images.register("later:1");
    const sb = sandboxConfig("p");
    const id = await runtime.RunPodSandbox(sb);
    const err = await runtime.CreateContainer(id, containerConfig("app", "later:1"), sb).catch((e) => e);
    expect(isNotFound(err)).toBe(true);
    await images.PullImage({ image: "later:1" });
    expect(await runtime.CreateContainer(id, containerConfig("app", "later:1"), sb)).toMatch(
      /^[0-9a-f]{64}$/,
    );
  });

  it("answers ExecSync from the image's table; a non-zero exit is a CodeExitError", async () => {
    const { runtime } = setup({
      "probe:1": {
        exec: {
          "cat /tmp/healthy": { stdout: "ok\n", exitCode: 0 },
          "test -f /tmp/ready": { stderr: "no", exitCode: 1 },
        },
      },
    });
    const pod = await runPod(runtime, "p", "probe:1");
    expect(await runtime.ExecSync(pod.containerId, ["cat", "/tmp/healthy"], 1000)).toEqual({
      stdout: "ok\n",
      stderr: "",
    });
    const err = await runtime.ExecSync(pod.containerId, ["test", "-f", "/tmp/ready"], 1000).catch((e) => e);
    expect(err).toBeInstanceOf(CodeExitError);
    expect(err).toMatchObject({ exitCode: 1, message: "command 'test -f /tmp/ready' exited with 1: no" });
    expect((await runtime.ExecSync(pod.containerId, ["nope"], 1000).catch((e) => e)).exitCode).toBe(127);

    await runtime.StopContainer(pod.containerId, 0);
    await expect(runtime.ExecSync(pod.containerId, ["cat", "/tmp/healthy"], 1000)).rejects.toThrow(
      "is in CONTAINER_EXITED state",
    );
  });

  it("force-stops a sandbox's running containers and removes them with it", async () => {
    const { clock, runtime } = setup({ "web:1": {}, "crash:1": { exitAfterMs: 5000, exitCode: 2 } });
    const pod = await runPod(runtime, "p", "crash:1");
    await runtime.StopPodSandbox(pod.podSandboxId);
    expect(await runtime.ContainerStatus(pod.containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 137,
    });
    // Its own exit timer died with it — no timer is left in the clock (hundreds of kubelets would
    // leak them) and the exit code stays the kill's.
    expect(clock.hasWaiters()).toBe(false);
    clock.step(5000);
    expect((await runtime.ContainerStatus(pod.containerId)).exitCode).toBe(137);

    const other = await runPod(runtime, "q", "web:1");
    await runtime.RemovePodSandbox(other.podSandboxId);
    expect(await runtime.ListContainers({ podSandboxId: other.podSandboxId })).toEqual([]);
    expect(isNotFound(await runtime.ContainerStatus(other.containerId).catch((e) => e))).toBe(true);
  });

  it("hosts 300 pods on one runtime, each container exiting on its own timer", async () => {
    const { clock, runtime } = setup({ "short:1": { exitAfterMs: 1000 }, "long:1": {} });
    const pods = [];
    for (let i = 0; i < 300; i++)
      pods.push(await runPod(runtime, `pod-${i}`, i % 2 === 0 ? "short:1" : "long:1"));

    expect(new Set(pods.map((p) => p.podSandboxId)).size).toBe(300);
    const ips = await Promise.all(
      pods.map(async (p) => (await runtime.PodSandboxStatus(p.podSandboxId)).network.ip),
    );
    expect(new Set(ips).size).toBe(300);
    expect((await runtime.ListContainers({ state: "CONTAINER_RUNNING" })).length).toBe(300);

    clock.step(1000);
    expect((await runtime.ListContainers({ state: "CONTAINER_EXITED" })).length).toBe(150);
    expect((await runtime.ListContainers({ state: "CONTAINER_RUNNING" })).length).toBe(150);

    for (const p of pods) await runtime.RemovePodSandbox(p.podSandboxId);
    expect(await runtime.ListContainers()).toEqual([]);
    expect(await runtime.ListPodSandbox()).toEqual([]);
    expect(clock.hasWaiters()).toBe(false);
  });
});
