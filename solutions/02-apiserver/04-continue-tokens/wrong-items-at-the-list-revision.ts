// Mistake: every object of the page gets the list's revision as its resourceVersion. Plausible
// because the page was read at that revision, so "the objects are at it"; but an object's
// resourceVersion is the revision of its own last write (its key's mod_revision): with the list's
// revision, the object says it was written when it was not, and a client that updates it with
// that resourceVersion as its precondition gets a 409 Conflict.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: the list's revision, not the object's mod_revision.
  itemRevision: (_modRevision, listRv) => listRv,
});
