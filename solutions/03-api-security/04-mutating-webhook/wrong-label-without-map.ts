// Mistake: always `add /metadata/labels/<key>`. Plausible because it works on every pod that
// already has labels; but JSON patch adds a member only to an object that exists — a pod with
// no labels has no /metadata/labels, the patch fails ("doc is missing path") and so does the pod.
import { admitWith, escapePointer, INJECTED_LABEL, reference } from "./mutating-webhook.ts";

export * from "./mutating-webhook.ts";
export const admit = admitWith({
  ...reference,
  labelOps: () => [
    { op: "add", path: `/metadata/labels/${escapePointer(INJECTED_LABEL.key)}`, value: INJECTED_LABEL.value },
  ],
});
