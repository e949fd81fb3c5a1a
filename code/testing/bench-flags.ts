/**
 * A benchmark's size flags: `--pods 3000` sets a size, `--quick` picks every size's small value
 * (a run of a few seconds, for the benchmark's own test), and anything that is not a positive
 * integer stops the run with one line saying which flag and what it got (exit 2).
 * No upstream counterpart: upstream's benchmarks are `go test -bench` functions with `-benchtime`.
 *
 * @upstream none — benchmark tooling
 * @chapter 00-life-of-a-pod
 */

/** `--quick` on the command line: every size flag not given takes its small value. */
export const quickMode = (argv: readonly string[] = process.argv) => argv.includes("--quick");

/** `--<name> N` (a positive integer), else `normal`, or `small` in `--quick` mode. */
export function sizeFlag(
  name: string,
  normal: number,
  small: number,
  argv: readonly string[] = process.argv,
): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return quickMode(argv) ? small : normal;
  const n = Number(argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name} needs a positive integer, got "${argv[i + 1] ?? ""}"`);
    process.exit(2);
  }
  return n;
}
