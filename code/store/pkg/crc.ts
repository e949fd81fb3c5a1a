/**
 * CRC-32C — the checksum of every WAL record and snapshot, and how one checksum chains to the next.
 *
 * Solves: recovery must notice a damaged record (a flipped bit, a half-written frame) and a record
 * in the wrong place; a checksum per record, each one seeded with the previous record's, does both
 * (see wal/record.ts). Go has crc32.Castagnoli in its standard library; Node 20 has no CRC-32C,
 * so it is computed here with a 256-entry table.
 *
 * Invariants:
 * - `crc32c(b, crc32c(a)) === crc32c(a ++ b)`: extending a checksum over more bytes is the same as
 *   checksumming all of them at once.
 *
 * @upstream etcd-io/etcd pkg/crc/crc.go (New: a CRC that continues from a previous one)
 * @chapter 01-etcd-watch
 */

// #region crc32c
/**
 * CRC-32C (Castagnoli): the checksum etcd uses for WAL records and snapshots. Castagnoli's
 * polynomial detects more error patterns than the older zlib CRC-32 for the same 4 bytes, and
 * CPUs have an instruction for it (we use a lookup table instead; same result).
 */
const CASTAGNOLI_REVERSED = 0x82f63b78;

const CRC32C_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 1 ? (crc >>> 1) ^ CASTAGNOLI_REVERSED : crc >>> 1;
    }
    table[byte] = crc >>> 0;
  }
  return table;
})();

/**
 * Extends a CRC-32C over more bytes. `crc32c(b, crc32c(a))` equals `crc32c(a ++ b)`, which is what
 * lets the WAL chain records: each record's checksum covers, in effect, every body before it.
 */
export function crc32c(data: Uint8Array, previous = 0): number {
  let crc = ~previous >>> 0;
  for (let i = 0; i < data.length; i++) {
    crc = CRC32C_TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  }
  return ~crc >>> 0;
}
// #endregion crc32c
