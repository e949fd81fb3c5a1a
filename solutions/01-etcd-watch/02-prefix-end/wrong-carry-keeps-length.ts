// Mistake: the carry works like an odometer — the 0xff bytes become 0x00 instead of being dropped, so "a\xff" ends at "b\x00" and the range takes in "b".
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = prefix.slice();
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end;
    }
    // The mistake: zero the byte and keep it, as when adding one to a number.
    end[i] = 0;
  }
  return new Uint8Array([0]);
}
