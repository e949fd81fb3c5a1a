// The reference answer is the course's own code: prefixEnd in code/store/mvcc/index.ts (region key-range).
export { prefixEnd } from "../../../code/store/mvcc/index.ts";
