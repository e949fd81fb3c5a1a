/**
 * Exercise: a mutating admission webhook — AdmissionReview in, AdmissionReview out, with a
 * JSON patch that labels every new pod and adds a sidecar container. README.md has the rules.
 *
 * The API server POSTs an AdmissionReview (`request.object` is the pod being created) and
 * applies your patch to the pod before it is validated and stored. Patch operations are RFC 6902
 * (`{ op: "add", path: "/spec/containers/-", value: … }`); `response.patch` is the JSON text of
 * the list of operations, base64-encoded.
 */

/** The label every pod gets. */
export const INJECTED_LABEL = { key: "sidecar-injected", value: "true" };

/** The container every pod gets, after its own containers. */
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

/** Answer one review: allow the pod, with the patch that labels it and adds the sidecar. */
export function admit(review: AdmissionReview): AdmissionReview {
  throw new Error(
    `TODO: answer review ${review.request?.uid ?? "?"} — add label ${INJECTED_LABEL.key} and container ${SIDECAR.name} with a base64 JSONPatch`,
  );
}
