/**
 * FakeImageService — the CRI's image half for simulations: a registry that is just a table of
 * image names and what their containers do, and the set of images pulled onto this node.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/testing/fake_image_service.go.
 *
 * Solves:
 * - a simulation needs images that behave ("exits with code 1 after 3 s", "runs forever",
 *   "answers `cat /tmp/healthy` with exit 0") without any real process; the table that says what
 *   an image's containers do lives with the images, and FakeRuntimeService reads it.
 * - a pod naming an image nobody registered must fail as on a real node — PullImage fails with the
 *   runtime's not-found text, which the kubelet turns into reason ErrImagePull.
 *
 * Invariants:
 * - an image is *known* iff it is in the registry table; it is *present* iff it was pulled (or
 *   preloaded) and not removed since. Only present images can have containers created from them.
 * - a name without a tag means `:latest`, as everywhere in Kubernetes ("busybox" = "busybox:latest").
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/testing/fake_image_service.go (FakeImageService)
 * @upstream kubernetes-sigs/kwok pkg/kwok/controllers/pod_controller.go (kwok's role: pods that only change state on timers)
 * @upstream containerd/containerd internal/cri/server/images/image_pull.go ("failed to pull and unpack image %q: failed to resolve reference %q: … not found")
 * @chapter 07-kubelet
 */
import type { Image, ImageFilter, ImageManagerService, ImageSpec, PodSandboxConfig } from "./cri.ts";
import { CRIError } from "./cri-errors.ts";

// #region behaviour
/** What one image's containers do, in fake time. */
export interface FakeImageBehaviour {
  /** The container exits on its own this long after it starts; absent: it runs until stopped. */
  exitAfterMs?: number;
  /** Its exit code when it exits on its own (default 0). */
  exitCode?: number;
  /**
   * How long SIGTERM takes to end it (then it exits with 143 = 128 + SIGTERM). Absent: it ignores
   * SIGTERM — as a process running as PID 1 without a handler does — and only the SIGKILL that
   * follows StopContainer's timeout ends it, with 137 = 128 + SIGKILL.
   */
  sigtermExitAfterMs?: number;
  /** ExecSync answers, keyed by the command joined with spaces; an unknown command exits 127. */
  exec?: Record<string, { stdout?: string; stderr?: string; exitCode: number }>;
  /** The image's size in bytes, as ListImages reports it. */
  size?: number;
}
// #endregion behaviour

/** "busybox" → "busybox:latest"; a name with a tag or digest is kept. */
export function normalizeImageName(image: string): string {
  const lastPart = image.slice(image.lastIndexOf("/") + 1);
  return lastPart.includes(":") || lastPart.includes("@") ? image : `${image}:latest`;
}

export class FakeImageService implements ImageManagerService {
  private readonly registry = new Map<string, FakeImageBehaviour>();
  private readonly present = new Map<string, Image>();
  private seq = 0;

  /** Pulls in the order they happened, for tests that assert "the kubelet pulled once". */
  readonly pulls: string[] = [];

  /** Makes `image` pullable, with the behaviour its containers will have. */
  register(image: string, behaviour: FakeImageBehaviour = {}): void {
    this.registry.set(normalizeImageName(image), behaviour);
  }

  /** Registers and pulls at once: an image already on the node when it boots. */
  preload(image: string, behaviour: FakeImageBehaviour = {}): void {
    this.register(image, behaviour);
    this.store(normalizeImageName(image));
  }

  /** The behaviour of a present image, or undefined if it is not present on the node. */
  behaviourOf(image: string): FakeImageBehaviour | undefined {
    const name = normalizeImageName(image);
    return this.present.has(name) ? this.registry.get(name) : undefined;
  }

  /** The ref a present image was stored under. */
  refOf(image: string): string | undefined {
    return this.present.get(normalizeImageName(image))?.id;
  }

  async ListImages(filter?: ImageFilter): Promise<Image[]> {
    const want = filter?.image ? normalizeImageName(filter.image.image) : undefined;
    return [...this.present.entries()]
      .filter(([name]) => !want || name === want)
      .map(([, img]) => copyImage(img));
  }

  async ImageStatus(image: ImageSpec): Promise<Image | null> {
    const img = this.present.get(normalizeImageName(image.image));
    return img ? copyImage(img) : null;
  }

  // #region pull
  async PullImage(image: ImageSpec, _sandboxConfig?: PodSandboxConfig): Promise<string> {
    const name = normalizeImageName(image.image);
    this.pulls.push(name);
    if (!this.registry.has(name)) {
      // containerd's words when the registry answers 404 for the reference.
      throw new CRIError(
        "NotFound",
        `failed to pull and unpack image "${name}": failed to resolve reference "${name}": ${name}: not found`,
      );
    }
    return this.store(name).id;
  }
  // #endregion pull

  async RemoveImage(image: ImageSpec): Promise<void> {
    this.present.delete(normalizeImageName(image.image));
  }

  private store(name: string): Image {
    let img = this.present.get(name);
    if (!img) {
      // A real runtime's ref is the image's content digest; a counter is enough to be unique here.
      const id = `sha256:${(++this.seq).toString(16).padStart(64, "0")}`;
      img = { id, repoTags: [name], size: this.registry.get(name)?.size ?? 0 };
      this.present.set(name, img);
    }
    return img;
  }
}

function copyImage(img: Image): Image {
  return { ...img, repoTags: [...img.repoTags] };
}
