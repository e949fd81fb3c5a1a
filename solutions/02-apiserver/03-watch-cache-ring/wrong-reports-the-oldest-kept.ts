// Mistake: the 410 names the oldest kept event's resourceVersion instead of the oldest
// resourceVersion a client could resume from (one less). Plausible because "the oldest the ring
// has" is the natural number to report; but it is not kube-apiserver's message, and the number it
// names is not the last one the ring could still have served.
import type { StatusError } from "../../../code/apiserver/errors.ts";
import { tooOldResourceVersion } from "../../../code/apiserver/storage/errors.ts";
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  // The mistake: (oldest kept) instead of (oldest kept − 1) in the message.
  protected override expired(rv: number, oldestServable: number): StatusError {
    return tooOldResourceVersion(rv, oldestServable + 1);
  }
}
