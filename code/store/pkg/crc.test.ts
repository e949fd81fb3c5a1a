import { describe, expect, it } from "vitest";
import { crc32c } from "./crc.ts";

const text = (s: string) => new TextEncoder().encode(s);

describe("crc32c", () => {
  it("matches the published CRC-32C check values", () => {
    expect(crc32c(new Uint8Array(0))).toBe(0);
    expect(crc32c(text("123456789"))).toBe(0xe3069283); // the standard check value for CRC-32C
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa); // RFC 3720 (iSCSI), 32 zero bytes
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43); // RFC 3720, 32 bytes of 0xff
  });

  it("chains: extending a crc over b equals the crc of a followed by b", () => {
    const a = text("the first record");
    const b = text("and the second");
    const ab = new Uint8Array([...a, ...b]);
    expect(crc32c(b, crc32c(a))).toBe(crc32c(ab));
  });
});
