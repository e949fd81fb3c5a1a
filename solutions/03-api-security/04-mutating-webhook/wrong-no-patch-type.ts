// Mistake: a patch without `patchType`. Plausible because JSONPatch is the only type there is;
// but the API server requires the two together ("webhook returned response.patch but not
// response.patchType") and refuses the answer — and the pod.
import { admitWith, reference } from "./mutating-webhook.ts";

export * from "./mutating-webhook.ts";
export const admit = admitWith({ ...reference, patchType: false });
