/**
 * Logger — one JSON object per line, the way etcd logs through zap.
 *
 * Solves:
 * - scripts and tests wait for etcd by reading its log ("ready to serve client requests"), and
 *   people grep it; the same shape as etcd's lines (`level`, `ts`, `caller`, `msg`, then fields)
 *   means the same tools work on ours;
 * - library code must not print on its own: it takes a `Logger`, and only the command (or a test)
 *   decides where lines go.
 *
 * Invariants:
 * - a line is a complete JSON object followed by "\n", written with one call, so lines from
 *   different parts never interleave.
 *
 * @upstream none — etcd logs with go.uber.org/zap (server/embed/config_logging.go sets it up)
 * @chapter 01-etcd-watch
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

/** Discards everything (tests that only care about behaviour). */
export const nopLogger: Logger = () => {};

/**
 * A logger writing zap-style JSON lines. `caller` stands where zap puts the Go file and line
 * (`embed/serve.go:103`); we name the component instead.
 */
export function jsonLogger(
  write: (line: string) => void,
  caller: string,
  now: () => Date = () => new Date(),
): Logger {
  return (level, msg, fields = {}) => {
    const line = { level, ts: now().toISOString(), caller, msg, ...fields };
    write(`${JSON.stringify(line, bigintAsString)}\n`);
  };
}

/** JSON has no 64-bit integers; ids (bigint) are written as decimal strings. */
function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
