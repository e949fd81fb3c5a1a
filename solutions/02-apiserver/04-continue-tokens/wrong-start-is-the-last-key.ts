// Mistake: the next page starts at the last key sent instead of just after it. Plausible because
// "continue from where you stopped" reads like "from the last key"; but etcd's range includes its
// start key, so every page begins with the last object of the page before, listed twice.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: the last key itself, not the smallest key after it (lastKey + "\x00").
  nextStart: (lastKey) => lastKey,
});
