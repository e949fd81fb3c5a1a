/**
 * ProcessImageService — the CRI's image half for the process runtime: "pulling" an image from the
 * catalog means building its programs into the runtime's image store, once, so that every
 * container of it starts from a ready bundle.
 * Mirrors upstream's containerd/containerd internal/cri/server/images/image_pull.go.
 * Mirrors containerd/containerd internal/cri/server/images/image_pull.go.
 *
 * Solves:
 * - start cost: running a TypeScript program through tsx compiles it at every start; a pulled
 *   image is already compiled (esbuild bundles the program and what it imports into one .mjs),
 *   so StartContainer pays only for Node's own start. The kubelet pulls before it creates, as it
 *   does for a real image, so the build never sits on the start path.
 * - an image has an identity: its ref is the sha256 digest of its content (the bundles), as a
 *   real image's id is the digest of its config; two tags of the same content are one image with
 *   two repoTags.
 * - a name not in the catalog fails as a registry's 404 does, in containerd's words, so the
 *   kubelet shows ErrImagePull then ImagePullBackOff.
 *
 * Invariants:
 * - an image is *present* iff `<root>/images/tags/<name>` names a digest whose directory exists;
 *   the store survives a restart of the runtime (a new instance over the same root sees it).
 * - the store is written atomically per image: bundles go to a temp dir renamed into place, so
 *   a half-written image is never present.
 * - names are normalized as everywhere in Kubernetes: no tag means `:latest`.
 *
 * Mode `tsx` skips the build (the "image" runs its TypeScript through tsx): it exists to measure
 * what the build saves.
 *
 * @upstream containerd/containerd internal/cri/server/images/image_pull.go (PullImage: "failed to pull and unpack image")
 * @upstream containerd/containerd internal/cri/server/images/image_status.go (ImageStatus: nil for an absent image)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/services.go (ImageManagerService)
 * @chapter 07-kubelet
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Image, ImageFilter, ImageManagerService, ImageSpec, PodSandboxConfig } from "./cri.ts";
import { CRIError } from "./cri-errors.ts";
import { normalizeImageName } from "./fake-image-service.ts";
import { type CatalogImage, lookupImage } from "./images/catalog.ts";
import { writeFileAtomic } from "./network/pod-network.ts";

export type ImageMode = "bundle" | "tsx";

/** Where the catalog's sources are. */
export const imagesSourceDir = fileURLToPath(new URL("./images/", import.meta.url));

/** A present image as the runtime needs it: its catalog entry and its program files. */
export interface PresentImage {
  ref: string;
  image: CatalogImage;
  /** program name → the file Node runs (a bundle, or the .ts source in tsx mode). */
  files: Record<string, string>;
}

const bundles = new Map<string, Promise<string>>();

/** `source` and everything it imports as one ESM file for Node (built once per process). */
export function bundleProgram(source: string): Promise<string> {
  let out = bundles.get(source);
  if (!out) {
    out = import("esbuild").then(async ({ build }) => {
      const result = await build({
        entryPoints: [source],
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        write: false,
        logLevel: "silent",
      });
      return result.outputFiles[0].text;
    });
    bundles.set(source, out);
  }
  return out;
}

/** The Node flags that load tsx, for mode `tsx` (an absolute URL: containers run in their own dir). */
export function tsxImportArgs(): string[] {
  return ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];
}

export class ProcessImageService implements ImageManagerService {
  private readonly store: string;

  constructor(
    rootDir: string,
    readonly mode: ImageMode = "bundle",
  ) {
    this.store = join(rootDir, "images");
    mkdirSync(join(this.store, "tags"), { recursive: true });
  }

  async ListImages(filter?: ImageFilter): Promise<Image[]> {
    const want = filter?.image ? normalizeImageName(filter.image.image) : undefined;
    const byRef = new Map<string, Image>();
    for (const tagFile of readdirSync(join(this.store, "tags"))) {
      const name = decodeURIComponent(tagFile);
      if (want && want !== name) continue;
      const img = this.imageOf(name);
      if (!img) continue;
      const seen = byRef.get(img.id);
      if (seen) seen.repoTags.push(name);
      else byRef.set(img.id, img);
    }
    return [...byRef.values()];
  }

  async ImageStatus(image: ImageSpec): Promise<Image | null> {
    const name = normalizeImageName(image.image);
    const img = this.imageOf(name);
    if (!img) return null;
    img.repoTags = readdirSync(join(this.store, "tags"))
      .map(decodeURIComponent)
      .filter((n) => this.refOf(n) === img.id);
    return img;
  }

  async PullImage(image: ImageSpec, _sandboxConfig?: PodSandboxConfig): Promise<string> {
    const name = normalizeImageName(image.image);
    const entry = lookupImage(name);
    if (!entry) {
      // containerd's words when the registry answers 404 for the reference.
      throw new CRIError(
        "NotFound",
        `failed to pull and unpack image "${name}": failed to resolve reference "${name}": ${name}: not found`,
      );
    }
    // The image's content: its own program and the busybox applets every image carries.
    const programs = [...(entry.program ? [entry.program] : []), "busybox"];
    const contents: Record<string, string> = {};
    for (const p of programs) {
      const source = join(imagesSourceDir, `${p}.ts`);
      contents[p] = this.mode === "tsx" ? readFileSync(source, "utf8") : await bundleProgram(source);
    }
    const digest = createHash("sha256");
    for (const p of programs) digest.update(`${p}\0${contents[p]}\0`);
    const hex = digest.digest("hex");
    const dir = join(this.store, hex);
    if (!existsSync(dir)) {
      const tmp = `${dir}.${process.pid}.tmp`;
      mkdirSync(tmp, { recursive: true });
      if (this.mode === "bundle") for (const p of programs) writeFileSync(join(tmp, `${p}.mjs`), contents[p]);
      writeFileSync(join(tmp, "image.json"), JSON.stringify({ ...entry, mode: this.mode, programs }));
      try {
        renameSync(tmp, dir);
      } catch {
        rmSync(tmp, { recursive: true, force: true }); // another pull of the same content won
      }
    }
    writeFileAtomic(join(this.store, "tags", encodeURIComponent(name)), `sha256:${hex}`);
    return `sha256:${hex}`;
  }

  async RemoveImage(image: ImageSpec): Promise<void> {
    const name = normalizeImageName(image.image);
    const ref = this.refOf(name);
    rmSync(join(this.store, "tags", encodeURIComponent(name)), { force: true });
    // The content goes when no tag names it any more (containerd's image GC, done at once here).
    if (ref && !readdirSync(join(this.store, "tags")).some((t) => this.refOf(decodeURIComponent(t)) === ref))
      rmSync(join(this.store, ref.slice("sha256:".length)), { recursive: true, force: true });
  }

  /** The present image `name`, with the files its programs run from; undefined if not pulled. */
  present(imageName: string): PresentImage | undefined {
    const ref = this.refOf(normalizeImageName(imageName));
    if (!ref) return undefined;
    const dir = join(this.store, ref.slice("sha256:".length));
    let meta: CatalogImage & { mode: ImageMode; programs: string[] };
    try {
      meta = JSON.parse(readFileSync(join(dir, "image.json"), "utf8"));
    } catch {
      return undefined;
    }
    const files: Record<string, string> = {};
    for (const p of meta.programs)
      files[p] = meta.mode === "tsx" ? join(imagesSourceDir, `${p}.ts`) : join(dir, `${p}.mjs`);
    return { ref, image: meta, files };
  }

  private refOf(name: string): string | undefined {
    try {
      return readFileSync(join(this.store, "tags", encodeURIComponent(name)), "utf8");
    } catch {
      return undefined;
    }
  }

  private imageOf(name: string): Image | undefined {
    const ref = this.refOf(name);
    if (!ref) return undefined;
    const dir = join(this.store, ref.slice("sha256:".length));
    if (!existsSync(dir)) return undefined;
    const size = readdirSync(dir).reduce((sum, f) => sum + readFileSync(join(dir, f)).length, 0);
    return { id: ref, repoTags: [name], size };
  }
}
