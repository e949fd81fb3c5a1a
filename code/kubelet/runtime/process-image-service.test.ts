import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isNotFound } from "./cri-errors.ts";
import { ProcessImageService } from "./process-image-service.ts";

const root = mkdtempSync(join(tmpdir(), "process-images-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("ProcessImageService", () => {
  it("pulls a catalog image into the store under its content digest; two tags are one image", async () => {
    const images = new ProcessImageService(root);
    expect(await images.ImageStatus({ image: "course/echo:1.0" })).toBeNull();
    const ref = await images.PullImage({ image: "course/echo:1.0" });
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await images.PullImage({ image: "course/echo" })).toBe(ref);
    expect(await images.ImageStatus({ image: "course/echo:latest" })).toMatchObject({
      id: ref,
      repoTags: expect.arrayContaining(["course/echo:1.0", "course/echo:latest"]),
    });
    expect((await images.ImageStatus({ image: "course/echo:1.0" }))?.size).toBeGreaterThan(1000);
    // Another image has other content, so another digest.
    expect(await images.PullImage({ image: "course/worker" })).not.toBe(ref);
    expect(await images.ListImages()).toHaveLength(2);
    expect(images.present("course/echo")?.files).toHaveProperty("busybox");
  }, 30_000);

  it("keeps pulled images for a new instance, and removes them idempotently", async () => {
    const again = new ProcessImageService(root);
    expect(await again.ImageStatus({ image: "course/worker:latest" })).not.toBeNull();
    await again.RemoveImage({ image: "course/worker" });
    await again.RemoveImage({ image: "course/worker" });
    expect(await again.ImageStatus({ image: "course/worker" })).toBeNull();
    expect(again.present("course/worker")).toBeUndefined();
  }, 30_000);

  it("fails to pull an image the catalog does not have, in containerd's words", async () => {
    const err = await new ProcessImageService(root).PullImage({ image: "course/web:9.9" }).catch((e) => e);
    expect(isNotFound(err)).toBe(true);
    expect(err.desc).toBe(
      'failed to pull and unpack image "course/web:9.9": failed to resolve reference "course/web:9.9": course/web:9.9: not found',
    );
  });
});
