import { describe, expect, it } from "vitest";
import type { Container, Pod } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { FakeImageService } from "../runtime/fake-image-service.ts";
import { applyDefaultImageTag, effectivePullPolicy, ImageManager, newImageBackOff } from "./image-manager.ts";

const s = 1000;
const pod = (uid = "uid-1"): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid },
  spec: { containers: [] },
});

function setup() {
  const clock = new FakeClock(0);
  const images = new FakeImageService();
  const events: string[] = [];
  const m = new ImageManager(
    images,
    (_o, type, reason, msg) => events.push(`${type} ${reason}: ${msg}`),
    newImageBackOff(clock),
    clock,
  );
  return { clock, images, events, m };
}

const c = (image: string, imagePullPolicy?: Container["imagePullPolicy"]): Container => ({
  name: "app",
  image,
  imagePullPolicy,
});

describe("ImageManager: pull policies", () => {
  it("IfNotPresent pulls a missing image once, then finds it present", async () => {
    const { m, images, events } = setup();
    images.register("web:1", { size: 42 });
    const first = await m.ensureImageExists(pod(), c("web:1", "IfNotPresent"));
    expect(first.imageRef).toMatch(/^sha256:/);
    const second = await m.ensureImageExists(pod(), c("web:1", "IfNotPresent"));
    expect(second.imageRef).toBe(first.imageRef);
    expect(images.pulls).toEqual(["web:1"]);
    expect(events).toEqual([
      'Normal Pulling: Pulling image "web:1"',
      'Normal Pulled: Successfully pulled image "web:1" in 0s (0s including waiting). Image size: 42 bytes.',
      'Normal Pulled: Container image "web:1" already present on machine',
    ]);
  });

  it("Always pulls on every call, even when the image is present", async () => {
    const { m, images } = setup();
    images.preload("web:1");
    await m.ensureImageExists(pod(), c("web:1", "Always"));
    await m.ensureImageExists(pod(), c("web:1", "Always"));
    expect(images.pulls).toEqual(["web:1", "web:1"]);
  });

  it("Never uses a present image and fails with ErrImageNeverPull for a missing one", async () => {
    const { m, images, events } = setup();
    images.preload("web:1");
    expect((await m.ensureImageExists(pod(), c("web:1", "Never"))).imageRef).toMatch(/^sha256:/);
    images.register("web:2");
    expect(await m.ensureImageExists(pod(), c("web:2", "Never"))).toEqual({
      imageRef: "",
      reason: "ErrImageNeverPull",
      message: 'Container image "web:2" is not present with pull policy of Never',
    });
    expect(images.pulls).toEqual([]);
    expect(events.at(-1)).toBe(
      'Warning ErrImageNeverPull: Container image "web:2" is not present with pull policy of Never',
    );
  });

  it("defaults as the API server would: Always for :latest or no tag, else IfNotPresent", () => {
    expect(effectivePullPolicy(c("web"))).toBe("Always");
    expect(effectivePullPolicy(c("web:latest"))).toBe("Always");
    expect(effectivePullPolicy(c("registry:5000/web:1"))).toBe("IfNotPresent");
    expect(applyDefaultImageTag("registry:5000/web")).toBe("registry:5000/web:latest");
  });
});

describe("ImageManager: pull backoff", () => {
  it("ErrImagePull, then ImagePullBackOff for 10 s, then 20 s, 40 s; keyed by pod and image", async () => {
    const { m, images, clock, events } = setup();
    const reason = async (p = pod(), image = "nope:1") =>
      ((await m.ensureImageExists(p, c(image, "IfNotPresent"))) as { reason?: string }).reason;
    expect(await reason()).toBe("ErrImagePull");
    expect(events).toContain(
      'Warning Failed: Failed to pull image "nope:1": rpc error: code = NotFound desc = failed to pull and unpack image "nope:1": failed to resolve reference "nope:1": nope:1: not found',
    );
    clock.step(9 * s);
    expect(await reason()).toBe("ImagePullBackOff");
    expect(events.at(-1)).toBe('Normal BackOff: Back-off pulling image "nope:1"');
    // Another pod, or another image, has no backoff of its own yet.
    expect(await reason(pod("uid-2"))).toBe("ErrImagePull");
    expect(await reason(pod(), "nope:2")).toBe("ErrImagePull");
    clock.step(1 * s);
    expect(await reason()).toBe("ErrImagePull");
    clock.step(19 * s);
    expect(await reason()).toBe("ImagePullBackOff");
    clock.step(1 * s);
    expect(await reason()).toBe("ErrImagePull");
    clock.step(39 * s);
    expect(await reason()).toBe("ImagePullBackOff");
    expect(images.pulls.filter((p) => p === "nope:1")).toHaveLength(4);
  });
});
