// Mistake: the fields are checked in the order they are used (the start key, then the revision) and
// the version last. Plausible because every check is there and a good token passes them all; but a
// token of another version is then refused for its rv or start — fields it may not even have — and
// a token with neither rv nor start gets the wrong one of upstream's messages.
import {
  ErrEmptyStartKey,
  ErrInvalidStartRV,
  ErrUnrecognizedEncodedVersion,
} from "../../../code/apiserver/storage/continue.ts";
import { continueTokens, reference } from "./continue.ts";

export * from "./continue.ts"; // everything else as in the answer, the Err… messages too

export const { encodeContinue, decodeContinue, listPage } = continueTokens({
  ...reference,
  // The mistake: start, rv, version — upstream checks version, rv, start.
  fieldsError(v, rv, start) {
    if (typeof start !== "string" || start === "") return ErrEmptyStartKey;
    if (typeof rv !== "number" || !Number.isInteger(rv) || rv === 0) return ErrInvalidStartRV;
    if (v !== "meta.k8s.io/v1") return `${ErrUnrecognizedEncodedVersion} ${String(v ?? "")}`;
    return undefined;
  },
});
