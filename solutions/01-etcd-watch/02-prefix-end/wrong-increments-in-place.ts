// Mistake: the prefix itself is incremented in place, so the caller's key changes too — `range(prefix, prefixEnd(prefix))` then reads [end, end).
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      // The mistake: subarray() shares the caller's bytes; slice() would copy them.
      const end = prefix.subarray(0, i + 1);
      end[i]++;
      return end;
    }
  }
  return new Uint8Array([0]);
}
