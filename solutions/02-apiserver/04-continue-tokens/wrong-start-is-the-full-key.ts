// Mistake: the token carries the full etcd key, and decoding trusts a start that begins with "/"
// as a full key. Plausible because the full key is what etcd needs to resume the range; but a
// client can then forge a token that starts the range at another resource's keys and read secrets
// through a list of pods — and the tokens are not kube-apiserver's.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: the whole key, not the part after the prefix …
  startOf: (key) => key,
  // … and so, on the way back, a key that looks whole is used as it is, never put under the prefix.
  keyOf: (start, keyPrefix) => ({ key: start.startsWith("/") ? start : keyPrefix + start }),
});
