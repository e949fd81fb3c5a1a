/**
 * Exercise: the key index — what was a key at revision R?
 *
 * Every key has a keyIndex: the revisions at which it changed, grouped into generations (one per
 * incarnation: from a creation up to and including the deletion, whose revision is the
 * tombstone). You write the lookup the whole store reads through: every range, every put (to
 * learn the key's create_revision and version) and every txn compare calls it. README.md has the
 * rules.
 *
 * The types come from code/store/mvcc/key-index.ts: a `Generation` is `{ ver, created, revs }`. Import
 * `ErrRevisionNotFound` from there too: it is the answer for "the key did not exist at that revision".
 */

import type { Generation, KeyIndexGet } from "../../../code/store/mvcc/key-index.ts";
import type { EtcdError } from "../../../code/store/rpctypes/error.ts";

/**
 * The generation holding the key's state at revision `rev`, or undefined if the key did not exist
 * then: before its first creation, or from a deletion up to the next creation.
 */
export function findGeneration(generations: readonly Generation[], rev: number): Generation | undefined {
  throw new Error(
    `TODO: findGeneration — which of the ${generations.length} generations was alive at ${rev}?`,
  );
}

/**
 * The key as it was at revision `atRev`: the revision of the change visible then (`modified`), the
 * creation of that incarnation (`created`) and how many changes it had seen by then (`version`).
 * ErrRevisionNotFound if the key did not exist at atRev.
 */
export function getAtRev(generations: readonly Generation[], atRev: number): KeyIndexGet | EtcdError {
  throw new Error(
    `TODO: getAtRev — the key at revision ${atRev} (${generations.length} generations): modified, created, version`,
  );
}
