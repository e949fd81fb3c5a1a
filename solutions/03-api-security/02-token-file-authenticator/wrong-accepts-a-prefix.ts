// Mistake: a token matches when it starts like a known one. Plausible when the lookup is written
// as a search ("find the line whose token the header begins with"); but then `s3cret-token-xyz`
// — or any longer string an attacker appends to a leaked prefix — is accepted. A secret matches
// whole or not at all.
import { reference, tokenFileWith } from "./token-file.ts";

export const { parseTokenFile, authenticateBearer } = tokenFileWith({
  ...reference,
  lookup: (tokens, token) => [...tokens].find(([known]) => token.startsWith(known))?.[1],
});
