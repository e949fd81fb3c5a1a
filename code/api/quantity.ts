/**
 * Quantity arithmetic — exact sums and comparisons of resource quantities (`500m` + `1500m` = `2`,
 * `1Gi` + `512Mi` = `1536Mi`), and their canonical text, as upstream's resource.Quantity prints it.
 *
 * Solves: quota and limit ranges add up and compare amounts a float would get wrong
 * (`0.1` + `0.2` CPUs) and print them in their messages (`used: requests.cpu=1500m`), so the text
 * must be upstream's canonical form, not the client's spelling.
 *
 * Invariants:
 * - a quantity is held as an integer count of nano-units (10⁻⁹), exact for every value a
 *   resource list carries; an unparseable text is `undefined`, never zero;
 * - a sum keeps the format (decimal SI or binary SI) of its first operand, as Quantity.Add does;
 * - the canonical text picks the largest suffix that keeps the number whole (`2000m` → `2`,
 *   `1536Mi`), binary only for whole values of at least 1024 (`512` bytes stays decimal).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity, Quantity.Add, Quantity.Cmp, Quantity.CanonicalizeBytes, Quantity.String)
 * @chapter 03-api-security
 */

export type QuantityFormat = "DecimalSI" | "BinarySI";

export interface Quantity {
  /** The value in nano-units. */
  nanos: bigint;
  format: QuantityFormat;
}

const NANO = 1_000_000_000n;
const decimal: Record<string, bigint> = {
  n: 1n,
  u: 1_000n,
  m: 1_000_000n,
  "": NANO,
  k: NANO * 1000n,
  M: NANO * 1000n ** 2n,
  G: NANO * 1000n ** 3n,
  T: NANO * 1000n ** 4n,
  P: NANO * 1000n ** 5n,
  E: NANO * 1000n ** 6n,
};
const binary: Record<string, bigint> = {
  Ki: NANO * 1024n,
  Mi: NANO * 1024n ** 2n,
  Gi: NANO * 1024n ** 3n,
  Ti: NANO * 1024n ** 4n,
  Pi: NANO * 1024n ** 5n,
  Ei: NANO * 1024n ** 6n,
};

// #region parse
/** ParseQuantity, exactly: `undefined` for a text that is not a quantity. */
export function parseQuantity(text: unknown): Quantity | undefined {
  const s = typeof text === "number" ? String(text) : typeof text === "string" ? text : "";
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(s);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return undefined;
  const [, sign, whole, frac = "", suffix = ""] = m;
  let scale: bigint;
  let format: QuantityFormat = "DecimalSI";
  if (suffix in binary) {
    scale = binary[suffix];
    format = "BinarySI";
  } else if (suffix in decimal) scale = decimal[suffix];
  else {
    const exp = Number(suffix.slice(1));
    if (exp < -9 || exp > 18) return undefined;
    scale = exp >= 0 ? NANO * 10n ** BigInt(exp) : NANO / 10n ** BigInt(-exp);
  }
  const digits = BigInt(`${whole || "0"}${frac}`);
  const nanos = (digits * scale) / 10n ** BigInt(frac.length);
  return { nanos: sign === "-" ? -nanos : nanos, format };
}
// #endregion parse

export const zeroQuantity = (format: QuantityFormat = "DecimalSI"): Quantity => ({ nanos: 0n, format });

export const addQuantity = (a: Quantity, b: Quantity): Quantity => ({
  nanos: a.nanos + b.nanos,
  format: a.format,
});
export const subQuantity = (a: Quantity, b: Quantity): Quantity => ({
  nanos: a.nanos - b.nanos,
  format: a.format,
});
export const cmpQuantity = (a: Quantity, b: Quantity): number =>
  a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;

/** Value() rounded up to a whole unit, as upstream's `Value`; `milliValue` likewise to a milli-unit. */
export const quantityMilliValue = (q: Quantity): bigint => ceilDiv(q.nanos, 1_000_000n);

function ceilDiv(a: bigint, b: bigint): bigint {
  const d = a / b;
  return a % b !== 0n && a > 0n ? d + 1n : d;
}

// #region format
/** Quantity.String: the canonical text. */
export function formatQuantity(q: Quantity): string {
  const neg = q.nanos < 0n;
  const abs = neg ? -q.nanos : q.nanos;
  const sign = neg ? "-" : "";
  if (abs === 0n) return "0";
  if (q.format === "BinarySI" && abs % NANO === 0n && abs >= NANO * 1024n) {
    for (const suffix of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]) {
      if (abs % binary[suffix] === 0n) return `${sign}${abs / binary[suffix]}${suffix}`;
    }
  }
  for (const suffix of ["E", "P", "T", "G", "M", "k", "", "m", "u", "n"]) {
    if (abs % decimal[suffix] === 0n) return `${sign}${abs / decimal[suffix]}${suffix}`;
  }
  return `${sign}${abs}n`;
}
// #endregion format

/** The canonical text of a quantity's text (`"1024Mi"` → `"1Gi"`); the text itself if it does not parse. */
export function canonicalQuantity(text: string): string {
  const q = parseQuantity(text);
  return q ? formatQuantity(q) : text;
}
