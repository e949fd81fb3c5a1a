// Mistake: the 410's fresh token carries the compacted revision again instead of -1. Plausible
// because "continue from the same place" seems to mean the same key at the same revision; but that
// revision is gone, so a client that follows the token gets the same 410, forever.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: the revision that was just compacted, where -1 means "go on at the newest".
  revisionAfterCompaction: (rv) => rv,
});
