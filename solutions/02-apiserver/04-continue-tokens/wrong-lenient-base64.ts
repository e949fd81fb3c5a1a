// Mistake: the token is read back with Buffer's lenient decoder, which skips every character that
// is not base64 and accepts "=" padding and the standard alphabet. Plausible because Buffer never
// complains, so it looks like the safe choice; but kube-apiserver's RawURLEncoding refuses such a
// token as `continue key is not valid: illegal base64 data`, and a token mangled on its way (a `+`
// turned into a space, a padded copy) is then read as a different token instead of refused.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: no check of the alphabet; Buffer reads "base64" and "base64url" alike.
  jsonOf: (token) => Buffer.from(token, "base64").toString("utf8"),
});
