// Mistake: a prefix of only 0xff bytes gets an empty range_end — which etcd reads as "just this one key".
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = prefix.slice(0, i + 1);
      end[i]++;
      return end;
    }
  }
  // The mistake: "there is no end" written as nothing, instead of "\0" (every key from the prefix on).
  return new Uint8Array(0);
}
