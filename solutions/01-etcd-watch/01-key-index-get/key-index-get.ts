// The reference answer is the course's own code: getAtRev and findGeneration in
// code/store/mvcc/key-index.ts (region get), which KeyIndex.get — and so every read of the store — calls.
export { findGeneration, getAtRev } from "../../../code/store/mvcc/key-index.ts";
