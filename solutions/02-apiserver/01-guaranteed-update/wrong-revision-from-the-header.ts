// Mistake: the revision it remembers for the key is the response header's revision instead of the
// key's mod_revision. Plausible because the header says "the revision this read was made at"; but
// that is the whole store's latest write, to any key. Once another key is written after this one,
// the object gets a resourceVersion it never had and the compare never matches.
import { guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: the store's revision, not the key's.
  revisionOf: (_kv, header) => header.revision,
});
