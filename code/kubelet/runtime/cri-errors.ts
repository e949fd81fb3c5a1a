/**
 * CRI errors — what a runtime's failures look like to the kubelet: a gRPC status (a code and a
 * description), plus the few error names the kubelet recognises by prefix.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/errors/errors.go.
 *
 * Solves:
 * - the kubelet must tell "that container is gone" (carry on: it was removed) from a real failure;
 *   the CRI says so with gRPC code NotFound, and `isNotFound` is the kubelet's one test for it.
 * - a failed exec probe is not a broken runtime: the runtime answers with an exit code, and the
 *   kubelet's client turns a non-zero one into a CodeExitError the prober reads.
 * - the kubelet reads image-pull failures by message prefix (gRPC errors lose Go error identity):
 *   "RegistryUnavailable…" and "SignatureValidationFailed…" get their own reasons; anything else
 *   becomes the container's waiting reason ErrImagePull.
 *
 * Invariants:
 * - `CRIError.message` is what Go's status error prints, `rpc error: code = <Code> desc = <desc>`,
 *   since that string is what ends up in the kubelet's events and in a container's waiting message.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/errors/errors.go (IsNotFound, ErrRegistryUnavailable, ErrSignatureValidationFailed)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-client/pkg/remote_runtime.go (ExecSync: CodeExitError "command '%s' exited with %d: %s")
 * @upstream kubernetes/kubernetes pkg/kubelet/images/types.go (ErrImagePull, ErrImagePullBackOff, ErrImageNeverPull, ErrInvalidImageName)
 * @upstream containerd/containerd internal/cri/server/container_status.go ("an error occurred when try to find container %q: not found")
 * @chapter 07-kubelet
 */

/** The gRPC status codes a CRI runtime uses (grpc/codes). */
export type GrpcCode = "NotFound" | "FailedPrecondition" | "InvalidArgument" | "DeadlineExceeded" | "Unknown";

export class CRIError extends Error {
  constructor(
    readonly code: GrpcCode,
    readonly desc: string,
  ) {
    super(`rpc error: code = ${code} desc = ${desc}`);
    this.name = "CRIError";
  }
}

/** crierrors.IsNotFound: the runtime does not know that id (already removed, or never was). */
export function isNotFound(err: unknown): boolean {
  return err instanceof CRIError && err.code === "NotFound";
}

// Error names the runtime may put at the start of a PullImage failure.
export const ErrRegistryUnavailable = "RegistryUnavailable";
export const ErrSignatureValidationFailed = "SignatureValidationFailed";

// The kubelet's image-pull reasons (a container's state.waiting.reason).
export const ErrImagePull = "ErrImagePull";
export const ErrImagePullBackOff = "ImagePullBackOff";
export const ErrImageNeverPull = "ErrImageNeverPull";
export const ErrInvalidImageName = "InvalidImageName";

/** A command that ran and exited non-zero (k8s.io/utils/exec CodeExitError). */
export class CodeExitError extends Error {
  constructor(
    readonly cmd: string[],
    readonly exitCode: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`command '${cmd.join(" ")}' exited with ${exitCode}: ${stderr}`);
    this.name = "CodeExitError";
  }
}

/** containerd's words for an id it does not have. */
export function containerNotFound(id: string): CRIError {
  return new CRIError("NotFound", `an error occurred when try to find container "${id}": not found`);
}

export function sandboxNotFound(id: string): CRIError {
  return new CRIError("NotFound", `an error occurred when try to find sandbox "${id}": not found`);
}
