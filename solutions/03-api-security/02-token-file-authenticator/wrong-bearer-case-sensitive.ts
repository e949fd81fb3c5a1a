// Mistake: the header must start with exactly "Bearer ". Plausible because kubectl writes it so;
// but an HTTP auth scheme is case-insensitive (RFC 7235), and upstream lowercases it: a client
// that sends `bearer <token>` is a valid user, not an anonymous one.
import { reference, tokenFileWith } from "./token-file.ts";

export const { parseTokenFile, authenticateBearer } = tokenFileWith({
  ...reference,
  bearer: (header) =>
    header?.startsWith("Bearer ") ? header.slice("Bearer ".length).trim() || undefined : undefined,
});
