// Mistake: the start key is not cleaned like a path — a token whose start holds `..`, `.` or `//`
// is accepted where kube-apiserver refuses it as `continue key is not valid`. Plausible because
// the start is put under the list's prefix anyway, so it looks harmless; but etcd keys are not
// paths, and upstream refuses what path.Clean would change rather than guess what it means.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: no path.Clean check; whatever the start holds is appended to the prefix.
  keyOf: (start, keyPrefix) => ({ key: keyPrefix + (start.startsWith("/") ? start.slice(1) : start) }),
});
