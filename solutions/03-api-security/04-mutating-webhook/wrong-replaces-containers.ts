// Mistake: the sidecar is written as the containers list. Plausible because `add` with the
// path of an existing member replaces it, and a list of one looks right in a quick test; but
// the pod's own containers are gone — the stored pod runs only the proxy.
import { admitWith, reference, SIDECAR } from "./mutating-webhook.ts";

export * from "./mutating-webhook.ts";
export const admit = admitWith({
  ...reference,
  sidecarOps: () => [{ op: "add", path: "/spec/containers", value: [{ ...SIDECAR }] }],
});
