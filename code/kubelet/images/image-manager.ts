/**
 * The image manager — makes sure a container's image is on the node before the container is
 * created: honours imagePullPolicy, pulls through the CRI, and backs off an image that fails.
 * Mirrors kubernetes/kubernetes pkg/kubelet/images/image_manager.go.
 *
 * Solves:
 * - `imagePullPolicy`: Always pulls on every container start (a moving tag may have moved),
 *   IfNotPresent pulls only when the runtime lacks the image, Never never pulls and fails the
 *   container with ErrImageNeverPull when the image is missing;
 * - an image that cannot be pulled (a typo, a private registry) must not be retried on every
 *   sync: after a failure the kubelet reports ErrImagePull once, then ImagePullBackOff until the
 *   backoff (10 s doubling to 300 s) has passed, and only then tries again;
 * - `kubectl describe pod` tells the story in events: Pulling, Pulled (with how long it took and
 *   the image's size), Failed, BackOff, or "already present on machine".
 *
 * Invariants:
 * - the backoff key is `<pod uid>_<image>` (the image with its default tag): another pod, or the
 *   same pod with a fixed image name, starts with no backoff;
 * - the backoff is measured from the last failed pull (IsInBackOffSinceUpdate with now), not from
 *   the container's exit as CrashLoopBackOff is;
 * - pulls are serialized, one at a time per node (upstream's default serializeImagePulls: true).
 *
 * Reduced: no pull secrets, no runtime class handler, no QPS throttle, no image volumes; the
 * kubelet's ImageService is the CRI image service itself.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/images/image_manager.go (imageManager, EnsureImageExists, shouldPullImage, applyDefaultImageTag, evalCRIPullErr)
 * @upstream kubernetes/kubernetes pkg/kubelet/images/puller.go (serialImagePuller)
 * @upstream kubernetes/kubernetes pkg/kubelet/images/types.go (ErrImagePullBackOff, ErrImagePull, ErrImageNeverPull)
 * @upstream kubernetes/kubernetes pkg/kubelet/events/event.go (PullingImage, PulledImage, FailedToPullImage, BackOffPullImage, ErrImageNeverPullPolicy)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (imageBackOff: NewBackOff(backOffPeriod, MaxContainerBackOff))
 * @chapter 07-kubelet
 */

import type { Container, Pod, PullPolicy } from "../../api/core.ts";
import type { Clock } from "../../client/util/clock.ts";
import { Backoff } from "../../client/util/flowcontrol/backoff.ts";
import type { EventRecorder } from "../../controllers/pod-control.ts";
import { ErrImageNeverPull, ErrImagePull, ErrImagePullBackOff } from "../container/reasons.ts";
import { goDuration } from "../kuberuntime/helpers.ts";
import type { ImageManagerService, PodSandboxConfig } from "../runtime/cri.ts";
import { ErrRegistryUnavailable, ErrSignatureValidationFailed } from "../runtime/cri-errors.ts";

// Event reasons (pkg/kubelet/events/event.go).
export const PullingImage = "Pulling";
export const PulledImage = "Pulled";
export const FailedToPullImage = "Failed";
export const BackOffPullImage = "BackOff";
export const ErrImageNeverPullPolicy = "ErrImageNeverPull";

/** The kubelet's image backoff: the same 10 s … 300 s as CrashLoopBackOff, client-go's reset. */
export function newImageBackOff(clock: Clock): Backoff {
  return new Backoff(10_000, 300_000, clock);
}

/** `{ imageRef }` on success; otherwise the reason (ErrImagePull, …) and a message for the status. */
export type EnsureImageResult = { imageRef: string } | { imageRef: ""; reason: string; message: string };

/** The pull policy the API server would have defaulted: Always for `:latest` or no tag. */
export function effectivePullPolicy(container: Container): PullPolicy {
  if (container.imagePullPolicy) return container.imagePullPolicy;
  return applyDefaultImageTag(container.image ?? "").endsWith(":latest") ? "Always" : "IfNotPresent";
}

/** A reference with neither tag nor digest gets `:latest`, without a registry host added. */
export function applyDefaultImageTag(image: string): string {
  const lastPart = image.slice(image.lastIndexOf("/") + 1);
  return lastPart.includes(":") || image.includes("@") ? image : `${image}:latest`;
}

export function shouldPullImage(policy: PullPolicy, imagePresent: boolean): boolean {
  if (policy === "Never") return false;
  return policy === "Always" || (policy === "IfNotPresent" && !imagePresent);
}

export class ImageManager {
  /** The tail of the serialized pulls. */
  private pulling: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly imageService: ImageManagerService,
    private readonly recorder: EventRecorder,
    readonly backOff: Backoff,
    private readonly clock: Clock,
  ) {}

  // #region image-pull-backoff
  async ensureImageExists(
    pod: Pod,
    container: Container,
    podSandboxConfig?: PodSandboxConfig,
  ): Promise<EnsureImageResult> {
    const requested = container.image ?? "";
    const image = applyDefaultImageTag(requested);
    const present = await this.imageService.ImageStatus({ image });

    if (!shouldPullImage(effectivePullPolicy(container), present !== null)) {
      if (present) {
        this.recorder(
          pod,
          "Normal",
          PulledImage,
          `Container image "${requested}" already present on machine`,
        );
        return { imageRef: present.id };
      }
      const message = `Container image "${requested}" is not present with pull policy of Never`;
      this.recorder(pod, "Warning", ErrImageNeverPullPolicy, message);
      return { imageRef: "", reason: ErrImageNeverPull, message };
    }

    const backOffKey = `${pod.metadata.uid}_${image}`;
    if (this.backOff.isInBackOffSinceUpdate(backOffKey, this.clock.now())) {
      const message = `Back-off pulling image "${requested}"`;
      this.recorder(pod, "Normal", BackOffPullImage, message);
      return { imageRef: "", reason: ErrImagePullBackOff, message };
    }

    this.recorder(pod, "Normal", PullingImage, `Pulling image "${requested}"`);
    const startTime = this.clock.now();
    const result = await this.serialPull(image, podSandboxConfig);
    if ("err" in result) {
      this.recorder(
        pod,
        "Warning",
        FailedToPullImage,
        `Failed to pull image "${requested}": ${result.err.message}`,
      );
      this.backOff.next(backOffKey, this.clock.now());
      const { reason, message } = evalCRIPullErr(image, result.err);
      return { imageRef: "", reason, message };
    }
    const waited = this.clock.now() - startTime;
    this.recorder(
      pod,
      "Normal",
      PulledImage,
      `Successfully pulled image "${requested}" in ${goDuration(result.pullDuration)} (${goDuration(waited)} including waiting). Image size: ${result.imageSize} bytes.`,
    );
    this.backOff.gc();
    return { imageRef: result.imageRef };
  }
  // #endregion image-pull-backoff

  /** One pull at a time: each waits for the one before it (the "waiting" in the Pulled event). */
  private serialPull(
    image: string,
    podSandboxConfig?: PodSandboxConfig,
  ): Promise<{ imageRef: string; pullDuration: number; imageSize: number } | { err: Error }> {
    const run = async () => {
      const start = this.clock.now();
      try {
        const imageRef = await this.imageService.PullImage({ image }, podSandboxConfig);
        const pullDuration = this.clock.now() - start;
        const status = await this.imageService.ImageStatus({ image });
        return { imageRef, pullDuration, imageSize: status?.size ?? 0 };
      } catch (err) {
        return { err: err instanceof Error ? err : new Error(String(err)) };
      }
    };
    const p = this.pulling.then(run, run);
    this.pulling = p;
    return p;
  }
}

/** A CRI pull error's reason by its prefix (gRPC errors lose Go's error identity). */
export function evalCRIPullErr(image: string, err: Error): { reason: string; message: string } {
  const text = err.message;
  if (text.startsWith(ErrRegistryUnavailable)) {
    return {
      reason: ErrRegistryUnavailable,
      message: `image pull failed for ${image} because the registry is unavailable${text.slice(ErrRegistryUnavailable.length)}`,
    };
  }
  if (text.startsWith(ErrSignatureValidationFailed)) {
    return {
      reason: ErrSignatureValidationFailed,
      message: `image pull failed for ${image} because the signature validation failed${text.slice(ErrSignatureValidationFailed.length)}`,
    };
  }
  return { reason: ErrImagePull, message: err.message };
}
