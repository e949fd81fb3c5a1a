/**
 * The CRI contract both runtimes keep — the fake (timers) and the process runtime (real
 * processes) pass the same tests, so the kubelet can run over either.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FakeClock } from "../../client/util/clock.ts";
import {
  type ContainerConfig,
  KubernetesContainerNameLabel,
  type PodSandboxConfig,
  type RuntimeService,
} from "./cri.ts";
import { isNotFound } from "./cri-errors.ts";
import { FakeImageService } from "./fake-image-service.ts";
import { FakeRuntimeService } from "./fake-runtime-service.ts";
import { ProcessImageService } from "./process-image-service.ts";
import { ProcessRuntimeService } from "./process-runtime-service.ts";

interface Subject {
  runtime: RuntimeService;
  /** An image whose containers run until stopped. */
  image: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const subjects: Record<string, () => Promise<Subject>> = {
  FakeRuntimeService: async () => {
    const images = new FakeImageService();
    images.preload("course/sleeper:1.0", {});
    return {
      runtime: new FakeRuntimeService(new FakeClock(Date.now()), images),
      image: "course/sleeper:1.0",
    };
  },
  ProcessRuntimeService: () => processRuntime(0),
  "ProcessRuntimeService with a warm pool": () => processRuntime(2),
};

async function processRuntime(warmPool: number): Promise<Subject> {
  const root = mkdtempSync(join(tmpdir(), "cri-contract-"));
  const images = new ProcessImageService(root);
  await images.PullImage({ image: "course/sleeper:1.0" });
  const runtime = new ProcessRuntimeService({ rootDir: join(root, "runtime"), images, warmPool });
  cleanups.push(async () => {
    // Whatever a failed test left running goes with its sandbox.
    for (const sb of await runtime.ListPodSandbox()) await runtime.RemovePodSandbox(sb.id);
    runtime.close();
    rmSync(root, { recursive: true, force: true });
  });
  return { runtime, image: "course/sleeper:1.0" };
}

function sandboxConfig(name: string): PodSandboxConfig {
  return { metadata: { name, uid: `uid-${name}`, namespace: "default", attempt: 0 }, labels: { pod: name } };
}

function containerConfig(name: string, image: string): ContainerConfig {
  return {
    metadata: { name, attempt: 0 },
    image: { image },
    labels: { [KubernetesContainerNameLabel]: name },
  };
}

for (const [name, make] of Object.entries(subjects)) {
  describe(`CRI contract: ${name}`, () => {
    it("moves a container CREATED → RUNNING → EXITED once; stop and remove are idempotent", async () => {
      const { runtime, image } = await make();
      const sb = sandboxConfig("a");
      const sandboxId = await runtime.RunPodSandbox(sb);
      const id = await runtime.CreateContainer(sandboxId, containerConfig("app", image), sb);
      expect((await runtime.ContainerStatus(id)).state).toBe("CONTAINER_CREATED");
      await runtime.StartContainer(id);
      expect((await runtime.ContainerStatus(id)).state).toBe("CONTAINER_RUNNING");
      await expect(runtime.StartContainer(id)).rejects.toThrow(
        `failed to set starting state for container "${id}": container is in CONTAINER_RUNNING state`,
      );
      await runtime.StopContainer(id, 0);
      expect(await runtime.ContainerStatus(id)).toMatchObject({
        state: "CONTAINER_EXITED",
        exitCode: 137,
        reason: "Error",
      });
      await runtime.StopContainer(id, 0);
      await runtime.RemoveContainer(id);
      await runtime.RemoveContainer(id);
      await expect(runtime.ContainerStatus(id)).rejects.toSatisfy(isNotFound);
      await runtime.RemovePodSandbox(sandboxId);
    }, 30_000);

    it("force-stops a sandbox's containers with the sandbox, and removes them with it", async () => {
      const { runtime, image } = await make();
      const sb = sandboxConfig("b");
      const sandboxId = await runtime.RunPodSandbox(sb);
      const id = await runtime.CreateContainer(sandboxId, containerConfig("app", image), sb);
      await runtime.StartContainer(id);
      await runtime.StopPodSandbox(sandboxId);
      expect((await runtime.PodSandboxStatus(sandboxId)).state).toBe("SANDBOX_NOTREADY");
      expect(await runtime.ContainerStatus(id)).toMatchObject({ state: "CONTAINER_EXITED", exitCode: 137 });
      await runtime.StopPodSandbox(sandboxId);
      await runtime.RemovePodSandbox(sandboxId);
      await runtime.RemovePodSandbox(sandboxId);
      await expect(runtime.ContainerStatus(id)).rejects.toSatisfy(isNotFound);
      await expect(runtime.PodSandboxStatus(sandboxId)).rejects.toSatisfy(isNotFound);
    }, 30_000);

    it("lists by sandbox, state and labels", async () => {
      const { runtime, image } = await make();
      const [sa, sb] = [sandboxConfig("c"), sandboxConfig("d")];
      const a = await runtime.RunPodSandbox(sa);
      const b = await runtime.RunPodSandbox(sb);
      const running = await runtime.CreateContainer(a, containerConfig("web", image), sa);
      await runtime.StartContainer(running);
      const created = await runtime.CreateContainer(b, containerConfig("side", image), sb);
      const ids = async (f: Parameters<RuntimeService["ListContainers"]>[0]) =>
        (await runtime.ListContainers(f)).map((c) => c.id);
      expect(await ids({ podSandboxId: a })).toEqual([running]);
      expect(await ids({ state: "CONTAINER_CREATED" })).toEqual([created]);
      expect(await ids({ labelSelector: { [KubernetesContainerNameLabel]: "web" } })).toEqual([running]);
      expect((await runtime.ListPodSandbox({ labelSelector: { pod: "d" } })).map((s) => s.id)).toEqual([b]);
      expect(await runtime.ListPodSandbox({ id: "nope" })).toEqual([]);
      await runtime.RemovePodSandbox(a);
      await runtime.RemovePodSandbox(b);
    }, 30_000);

    it("answers NotFound, in containerd's words, for ids it does not know", async () => {
      const { runtime } = await make();
      await expect(runtime.ContainerStatus("x")).rejects.toThrow(
        'rpc error: code = NotFound desc = an error occurred when try to find container "x": not found',
      );
      await expect(runtime.PodSandboxStatus("y")).rejects.toThrow(
        'rpc error: code = NotFound desc = an error occurred when try to find sandbox "y": not found',
      );
      await expect(runtime.StopContainer("x", 0)).rejects.toSatisfy(isNotFound);
      await expect(runtime.StopPodSandbox("y")).rejects.toSatisfy(isNotFound);
    });
  });
}
