// Mistake: the txn compares the key's version instead of its mod_revision. Plausible because
// "version" sounds like the field made for optimistic locking; but it counts writes since the key
// was created, so a delete and re-create between read and write brings it back to 1 — and the
// stale update overwrites the new object.
import { bytes, guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: "unchanged since I read it" judged by the version (writes since creation).
  stillAsRead: (t, state) => ({
    key: bytes(t.key),
    target: "VERSION",
    result: "EQUAL",
    version: state.version,
  }),
});
