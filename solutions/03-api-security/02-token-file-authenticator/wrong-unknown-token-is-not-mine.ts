// Mistake: a token that is not in the file is "not mine" (null). Plausible because the token file
// does not know it; but the request *did* present a credential, and "not mine" lets the union fall
// through to anonymous — a wrong password that logs you in as system:anonymous instead of a 401.
import { reference, tokenFileWith } from "./token-file.ts";

export const { parseTokenFile, authenticateBearer } = tokenFileWith({
  ...reference,
  unknown: () => null,
});
