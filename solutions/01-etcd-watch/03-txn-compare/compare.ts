// The reference answer is the course's own code: applyCompare and compareKV in
// code/store/etcdserver/apply.ts (region compare), which every txn of the store evaluates.
export { applyCompare, compareKV } from "../../../code/store/etcdserver/apply.ts";
