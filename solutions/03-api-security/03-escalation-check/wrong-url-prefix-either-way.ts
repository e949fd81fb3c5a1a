// Mistake: URL prefixes are compared in both directions. Plausible because "one starts the other"
// sounds symmetric; but then the owner of `/healthz` could grant `/healthz/*`, and of `/api`
// could grant `/apis` — more than they hold.
import { coversWith, reference } from "./covers.ts";

export const covers = coversWith({
  ...reference,
  // The mistake: whichever starts the other covers.
  urlCovered: (owned, url) =>
    owned.replace(/\*$/, "").startsWith(url.replace(/\*$/, "")) || url.startsWith(owned.replace(/\*$/, "")),
});
