/**
 * Duration — a Go `time.Duration` as flags write it: `5m0s`, `1h30m`, `90s`, `500ms`, `0`.
 *
 * Solves: Kubernetes components take every interval as a Go duration (`--etcd-compaction-interval=5m0s`,
 * `--leader-elect-lease-duration=15s`); a learner copies those values from upstream docs and
 * manifests, so our commands must read exactly the same text, and print their defaults the way
 * `--help` upstream prints them.
 *
 * Invariants:
 * - `parseDuration` accepts what Go's `time.ParseDuration` accepts: an optional sign, then one or
 *   more `<number><unit>` pairs (units `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`; the number may have
 *   a fraction), or the bare `0`; anything else is an error value with Go's message;
 * - values are milliseconds, rounded: the resolution our timers have (Go keeps nanoseconds);
 * - `formatDuration(parseDuration(s))` is Go's `Duration.String()` of the same value (`90s` →
 *   `1m30s`, `5m` → `5m0s`).
 *
 * @upstream golang/go src/time/format.go (ParseDuration, Duration.String)
 * @chapter 02-apiserver
 */

/** A text that is not a Go duration; the message is Go's (`time: invalid duration "5 minutes"`). */
export class DurationError extends Error {
  override readonly name = "DurationError";
}

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5, the micro sign
  μs: 1e-3, // U+03BC, the Greek letter mu: Go accepts both
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// #region parse-duration
/** A Go duration in milliseconds (`5m0s` → 300000), or Go's error for the text. */
export function parseDuration(text: string): number | DurationError {
  const invalid = new DurationError(`time: invalid duration ${JSON.stringify(text)}`);
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1;
    rest = rest.slice(1);
  }
  // The one unit-less value Go allows: "0" (and "-0", "+0").
  if (rest === "0") return 0;
  if (rest === "") return invalid;
  let total = 0;
  while (rest !== "") {
    // A number: digits, optionally a fraction; "5", "1.5", ".5" and "5." all count, "." does not.
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (number[0] === "" || number[0] === ".") return invalid;
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === "") return new DurationError(`time: missing unit in duration ${JSON.stringify(text)}`);
    if (!(unit in unitMs)) {
      return new DurationError(
        `time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`,
      );
    }
    rest = rest.slice(unit.length);
    total += Number(number[0]) * unitMs[unit];
  }
  // Math.round(-0.4) is -0; `|| 0` keeps the answer a plain 0.
  return Math.round(sign * total) || 0;
}
// #endregion parse-duration

/** Go's `Duration.String()` for a whole number of milliseconds: `300000` → `5m0s`, `1500` → `1.5s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  // Seconds keep their fraction, without trailing zeros: 1.5s, not 1.500s.
  const seconds = `${(ms % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}
