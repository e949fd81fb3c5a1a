/**
 * Exercise: DeltaFIFO — collapse a doubled deletion, and queue what a relist means.
 *
 * `dedupDeltas` merges the last two deltas when both are deletions (keeping the one that knows
 * the final state); `replaceDeltas` appends a Replaced for every listed object and a tombstone
 * for every queued or known key the list lacks. README.md has the rules.
 */
import type { KubeObject } from "../../../code/api/meta.ts";
import type { Deltas } from "../../../code/client/tools/cache/delta-fifo.ts";

/** The deltas with a trailing pair of deletions collapsed into one. */
export function dedupDeltas(deltas: Deltas): Deltas {
  throw new Error(`TODO: dedupDeltas — collapse the last two of ${deltas.map((d) => d.type).join(", ")}`);
}

/** The queue after a relist of `listed`, given what was queued and what the cache knows. */
export function replaceDeltas(
  queued: ReadonlyMap<string, Deltas>,
  listed: KubeObject[],
  known: ReadonlyMap<string, KubeObject>,
): Map<string, Deltas> {
  throw new Error(
    `TODO: replaceDeltas — ${listed.length} listed, ${queued.size} queued, ${known.size} known`,
  );
}
