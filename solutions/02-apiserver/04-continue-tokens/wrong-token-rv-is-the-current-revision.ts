// Mistake: the page's resourceVersion and its token carry the revision etcd answered with instead
// of the revision the list is read at. Plausible because for the first page the two are the same;
// but header.revision is etcd's newest revision even for a read at an older one, so from the
// second page on the list jumps to the newest state and stops being one snapshot.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: the response header's revision, whatever revision the page was read at.
  listRevision: (_tokenRv, resp) => resp.header.revision,
});
