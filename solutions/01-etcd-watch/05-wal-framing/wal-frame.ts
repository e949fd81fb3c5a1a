// The reference answer is the course's own code: encodeFrame and decodeFrame in
// code/store/wal/record.ts (regions frame-size, encode and decode), which the WAL appends and
// recovers with.
export { decodeFrame, encodeFrame } from "../../../code/store/wal/record.ts";
