// Mistake: the file authenticator adds system:authenticated itself. Plausible because every
// authenticated user must have it; but that is the group adder's job, once, around the union —
// an authenticator that adds it hands on groups the file does not say (and a token file line that
// already lists the group would get it twice).
import { reference, tokenFileWith } from "./token-file.ts";

export const { parseTokenFile, authenticateBearer } = tokenFileWith({
  ...reference,
  user: (found) => ({ ...found, groups: [...found.groups, "system:authenticated"] }),
});
