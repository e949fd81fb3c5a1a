/**
 * Hard eviction thresholds — `signal<value>` settings (`memory.available<100Mi`,
 * `nodefs.available<10%`) read into thresholds, with upstream's errors.
 * Mirrors kubernetes/kubernetes pkg/kubelet/eviction/helpers.go.
 *
 * Solves:
 * - the kubelet keeps some memory and disk back from pods: a node whose memory.available falls
 *   below the threshold evicts pods, and the scheduler must not have filled it that far, so the
 *   threshold is subtracted from allocatable (nodestatus/setters.ts, nodeAllocatableReservation);
 * - a misspelt signal (`memory.availabe`) or a zero threshold stops the kubelet at start.
 *
 * Invariants:
 * - a value ending in `%` is a fraction of capacity (`10%` → 0.1); `0%` and `100%` are not
 *   thresholds and are dropped, as upstream drops them;
 * - a quantity threshold is positive; a percentage is within 0%..100%;
 * - the signals are upstream's (signalToResource); only memory.available and nodefs.available
 *   change allocatable (upstream's hardEvictionReservation looks at those two alone).
 *
 * What upstream does differently: 1.32 compares a percentage's fraction with 100, so `150%` is
 * accepted there; we refuse it with the message later releases give.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/eviction/helpers.go (ParseThresholdConfig, parseThresholdStatements, parseThresholdStatement, parsePercentage, validSignal)
 * @upstream kubernetes/kubernetes pkg/kubelet/eviction/api/types.go (Signal, signals)
 * @upstream kubernetes/kubernetes pkg/kubelet/cm/node_container_manager_linux.go (hardEvictionReservation: the two signals that reserve)
 * @chapter 07-kubelet
 */
import { parseQuantity } from "../../../api/quantity.ts";
import type { EvictionThreshold } from "../../nodestatus/setters.ts";

/** pkg/kubelet/eviction/api: the signals a threshold may name. */
export const evictionSignals: readonly string[] = [
  "memory.available",
  "allocatableMemory.available",
  "nodefs.available",
  "nodefs.inodesFree",
  "imagefs.available",
  "imagefs.inodesFree",
  "containerfs.available",
  "containerfs.inodesFree",
  "pid.available",
];

/** One parsed threshold: `signal < quantity` or `signal < percentage × capacity`. */
export interface Threshold {
  signal: string;
  /** The quantity as written (`100Mi`), or absent for a percentage. */
  quantity?: string;
  /** A fraction of capacity (0.1 for `10%`). */
  percentage?: number;
}

/** resource.ErrFormatWrong's text. */
const quantityFormatError =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

// #region parse-thresholds
/** parseThresholdStatement for one `signal: value`; undefined for 0% and 100% (no threshold). */
function parseThresholdStatement(signal: string, value: string): Threshold | undefined | string {
  if (!evictionSignals.includes(signal)) return `unsupported eviction signal ${signal}`;
  if (value.endsWith("%")) {
    if (value === "0%" || value === "100%") return undefined;
    const text = value.replace(/%+$/, "");
    const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
    if (Number.isNaN(n)) return `strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`;
    const fraction = n / 100;
    if (fraction < 0) return `eviction percentage threshold ${signal} must be >= 0%: ${value}`;
    if (fraction > 1) return `eviction percentage threshold ${signal} must be <= 100%: ${value}`;
    return { signal, percentage: fraction };
  }
  const q = parseQuantity(value);
  if (!q) return quantityFormatError;
  if (q.nanos <= 0n) return `eviction threshold ${signal} must be positive: ${value}`;
  return { signal, quantity: value };
}

/** ParseThresholdConfig's hard part: every statement, or the first error. */
export function parseThresholdConfig(evictionHard: Readonly<Record<string, string>>): Threshold[] | string {
  const out: Threshold[] = [];
  for (const [signal, value] of Object.entries(evictionHard)) {
    const t = parseThresholdStatement(signal, value);
    if (typeof t === "string") return t;
    if (t) out.push(t);
  }
  return out;
}
// #endregion parse-thresholds

const allocatableSignals: readonly string[] = [
  "memory.available",
  "nodefs.available",
  "imagefs.available",
  "nodefs.inodesFree",
];

/**
 * The thresholds in the form the node status setters take (nodestatus/setters.ts). Signals that
 * type does not carry (pid, containerfs, imagefs inodes) are left out: none of them reserves
 * any allocatable resource.
 */
export function toNodeStatusThresholds(thresholds: readonly Threshold[]): EvictionThreshold[] {
  return thresholds
    .filter((t) => allocatableSignals.includes(t.signal))
    .map((t) => {
      const out: EvictionThreshold = { signal: t.signal as EvictionThreshold["signal"] };
      if (t.quantity !== undefined) out.quantity = t.quantity;
      if (t.percentage !== undefined) out.percentage = t.percentage;
      return out;
    });
}
