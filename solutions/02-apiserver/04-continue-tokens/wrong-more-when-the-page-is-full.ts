// Mistake: a page gets a continue token whenever it is full (as many items as the limit), instead
// of when etcd says there is `more`. Plausible because "a full page means there may be more" is how
// paging usually guesses; but when the last page happens to be full, the client gets a token to an
// empty page — kube-apiserver sends no token: etcd already said that nothing follows.
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: guessed from the page's size, not read from etcd's answer.
  hasMore: (resp, limit) => resp.kvs.length === limit,
});
