// Mistake: the response gets a fresh uid. Plausible because "uid" looks like an id for the new
// message; but it must be the request's, so that the API server knows which request this
// answers ("expected response.uid=…") — it refuses the answer, and with it the pod.
import { randomUUID } from "node:crypto";
import { admitWith, reference } from "./mutating-webhook.ts";

export * from "./mutating-webhook.ts";
export const admit = admitWith({ ...reference, responseUid: () => randomUUID() });
