// Mistake: a frame that runs past the end of the bytes is reported as an invalid length — damage — instead of short-payload, so recovery refuses to start after an ordinary crash instead of cutting off the torn write.
import { type DecodedFrame, decodeFrame as realDecode } from "../../../code/store/wal/record.ts";

export { encodeFrame } from "../../../code/store/wal/record.ts";

export function decodeFrame(bytes: Uint8Array, offset: number, previousCrc: number): DecodedFrame {
  const decoded = realDecode(bytes, offset, previousCrc);
  if (decoded.ok || decoded.problem.kind !== "short-payload") return decoded;
  // The mistake: "a length longer than the file cannot be right" — but it is what a crash mid-write leaves.
  const { frameBytes, available } = decoded.problem;
  return {
    ok: false,
    problem: {
      kind: "invalid-length",
      detail: `frame of ${frameBytes} bytes runs past the end (${available} left)`,
    },
  };
}
