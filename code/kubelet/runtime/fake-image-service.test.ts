import { describe, expect, it } from "vitest";
import { CRIError, isNotFound } from "./cri-errors.ts";
import { FakeImageService, normalizeImageName } from "./fake-image-service.ts";

describe("FakeImageService", () => {
  it("pulls a registered image, after which ImageStatus and ListImages see it", async () => {
    const images = new FakeImageService();
    images.register("busybox", { size: 4_000_000 });
    expect(await images.ImageStatus({ image: "busybox" })).toBeNull();

    const ref = await images.PullImage({ image: "busybox" });
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await images.ImageStatus({ image: "busybox:latest" })).toEqual({
      id: ref,
      repoTags: ["busybox:latest"],
      size: 4_000_000,
    });
    // Pulling again keeps the same ref: the image is already there.
    expect(await images.PullImage({ image: "busybox:latest" })).toBe(ref);
    expect((await images.ListImages()).map((i) => i.id)).toEqual([ref]);
    expect(images.pulls).toEqual(["busybox:latest", "busybox:latest"]);
  });

  it("fails to pull an unknown image with the runtime's not-found error", async () => {
    const images = new FakeImageService();
    const err = await images.PullImage({ image: "example.com/nope:v1" }).catch((e) => e);
    expect(err).toBeInstanceOf(CRIError);
    expect(isNotFound(err)).toBe(true);
    expect(err.message).toBe(
      'rpc error: code = NotFound desc = failed to pull and unpack image "example.com/nope:v1": ' +
        'failed to resolve reference "example.com/nope:v1": example.com/nope:v1: not found',
    );
    expect(await images.ImageStatus({ image: "example.com/nope:v1" })).toBeNull();
  });

  it("removes images idempotently, and a preloaded image needs no pull", async () => {
    const images = new FakeImageService();
    images.preload("pause:3.10");
    images.register("web");
    await images.PullImage({ image: "web" });
    expect(images.behaviourOf("pause:3.10")).toEqual({});
    await images.RemoveImage({ image: "web" });
    await images.RemoveImage({ image: "web" });
    expect(images.behaviourOf("web")).toBeUndefined();
    expect((await images.ListImages()).map((i) => i.repoTags[0])).toEqual(["pause:3.10"]);
    expect((await images.ListImages({ image: { image: "web" } })).length).toBe(0);
  });

  it("normalizes a name without a tag to :latest, keeping registries' ports and digests", () => {
    expect(normalizeImageName("busybox")).toBe("busybox:latest");
    expect(normalizeImageName("localhost:5000/app")).toBe("localhost:5000/app:latest");
    expect(normalizeImageName("localhost:5000/app:v2")).toBe("localhost:5000/app:v2");
    expect(normalizeImageName("app@sha256:abc")).toBe("app@sha256:abc");
  });
});
