// Mistake: only the last byte is incremented, so a prefix ending in 0xff wraps round to 0x00 — a range that selects nothing.
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  if (prefix.length === 0) return new Uint8Array([0]);
  const end = prefix.slice();
  // The mistake: no carry. 0xff + 1 does not fit in a byte; Uint8Array stores it as 0x00.
  end[end.length - 1]++;
  return end;
}
