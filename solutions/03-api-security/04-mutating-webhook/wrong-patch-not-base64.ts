// Mistake: `patch` is the JSON text itself, not its base64. Plausible because the rest of the
// review is plain JSON; but `patch` is a Go []byte, and JSON carries bytes as base64 — the API
// server cannot decode the answer ("illegal base64 data at input byte 0") and, failurePolicy
// Fail, refuses the pod.
import { admitWith, reference } from "./mutating-webhook.ts";

export * from "./mutating-webhook.ts";
export const admit = admitWith({ ...reference, encode: (ops) => JSON.stringify(ops) });
