// The reference answer. The API server's side of the same exchange is in the course's code:
// code/apiserver/admission/webhook/mutating.ts (region apply-patch) applies what this returns.
//
// Each decision is one named step in `reference`; `admitWith` puts them together. A recorded
// mistake next to this file (wrong-*.ts) is this answer with one step done wrong.

export const INJECTED_LABEL = { key: "sidecar-injected", value: "true" };

export const SIDECAR = { name: "proxy", image: "registry.example.com/proxy:1.0" };

export interface AdmissionReview {
  apiVersion: "admission.k8s.io/v1";
  kind: "AdmissionReview";
  request?: {
    uid: string;
    operation: string;
    // biome-ignore lint/suspicious/noExplicitAny: the pod as JSON
    object: any;
  };
  response?: {
    uid: string;
    allowed: boolean;
    patchType?: "JSONPatch";
    patch?: string;
  };
}

export interface PatchOperation {
  op: "add" | "replace" | "remove";
  path: string;
  value?: unknown;
}

/** JSON pointer escaping (RFC 6901): `~` is `~0`, `/` is `~1`. */
export const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

export interface Steps {
  /** The uid of the response: the request's, so the API server knows what it answers. */
  responseUid(review: AdmissionReview): string;
  /** The label: into the existing map, or the map created with it. */
  labelOps(pod: { metadata?: { labels?: Record<string, string> } }): PatchOperation[];
  /** The sidecar: appended, the pod's own containers kept. */
  sidecarOps(pod: { spec?: { containers?: unknown[] } }): PatchOperation[];
  /** The patch as `response.patch` carries it: base64 of the JSON text. */
  encode(ops: PatchOperation[]): string;
  /** Whether to say what kind of patch it is (the API server requires it with a patch). */
  patchType: boolean;
}

export const reference: Steps = {
  responseUid: (review) => review.request?.uid ?? "",
  labelOps: (pod) =>
    pod.metadata?.labels
      ? [
          {
            op: "add",
            path: `/metadata/labels/${escapePointer(INJECTED_LABEL.key)}`,
            value: INJECTED_LABEL.value,
          },
        ]
      : [{ op: "add", path: "/metadata/labels", value: { [INJECTED_LABEL.key]: INJECTED_LABEL.value } }],
  sidecarOps: () => [{ op: "add", path: "/spec/containers/-", value: { ...SIDECAR } }],
  encode: (ops) => Buffer.from(JSON.stringify(ops)).toString("base64"),
  patchType: true,
};

export function admitWith(steps: Steps) {
  return (review: AdmissionReview): AdmissionReview => {
    const pod = review.request?.object ?? {};
    const ops = [...steps.labelOps(pod), ...steps.sidecarOps(pod)];
    const response: NonNullable<AdmissionReview["response"]> = {
      uid: steps.responseUid(review),
      allowed: true,
      patch: steps.encode(ops),
    };
    if (steps.patchType) response.patchType = "JSONPatch";
    return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
  };
}

export const admit = admitWith(reference);
