import { describe, expect, it } from "vitest";
import { CRILogWriter, formatCRILogLine, rfc3339Nano } from "./cri-log-writer.ts";

function writer(maxLen?: number) {
  const lines: string[] = [];
  const w = new CRILogWriter(
    "stdout",
    (l) => lines.push(l),
    () => Date.UTC(2026, 11, 7, 3, 4, 5, 6) + 0.25,
    maxLen,
  );
  return { w, lines };
}

describe("CRILogWriter", () => {
  it("stamps each line with a fixed-width RFC3339Nano time, the stream and F", () => {
    expect(rfc3339Nano(Date.UTC(2026, 11, 7, 3, 4, 5, 6) + 0.25)).toBe("2026-12-07T03:04:05.006250000Z");
    expect(formatCRILogLine("T", "stderr", "F", "boom")).toBe("T stderr F boom\n");
    const { w, lines } = writer();
    w.write("one\ntw");
    w.write("o\r\n");
    expect(lines).toEqual([
      "2026-12-07T03:04:05.006250000Z stdout F one\n",
      "2026-12-07T03:04:05.006250000Z stdout F two\n",
    ]);
  });

  it("waits for the end of a line, and writes a remainder without newline as P at the end", () => {
    const { w, lines } = writer();
    w.write("no newline yet");
    expect(lines).toEqual([]);
    w.end();
    expect(lines.map((l) => l.slice(31))).toEqual(["stdout P no newline yet\n"]);
    w.end();
    expect(lines).toHaveLength(1);
  });

  it("cuts a line longer than the limit into partial lines, the last piece full", () => {
    const { w, lines } = writer(4);
    w.write("abcdefghij\nxyzw\n");
    expect(lines.map((l) => l.slice(31))).toEqual([
      "stdout P abcd\n",
      "stdout P efgh\n",
      "stdout F ij\n",
      "stdout F xyzw\n",
    ]);
  });
});
