// Mistake: the token is standard, padded base64 — not kube-apiserver's unpadded base64url. Plausible
// because "base64" is what Buffer, and most of the web, mean by base64; but the tokens no longer
// match upstream's byte for byte, and a `+`, `/` or `=` in them must be escaped in ?continue=.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: "base64" where upstream uses base64.RawURLEncoding ("base64url" to Buffer).
  tokenText: (json) => Buffer.from(json, "utf8").toString("base64"),
});
