// Mistake: encodeContinue cuts the prefix's length off the key without checking that the key starts
// with the prefix. Plausible because listPage only ever encodes keys it read under the prefix; but
// a key from elsewhere then becomes a token naming some other key under the prefix, silently —
// upstream refuses it: `unable to encode next field: the key and key prefix do not match`.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: no check that the key is under the prefix.
  startOf: (key, keyPrefix) => key.slice(keyPrefix.length),
});
