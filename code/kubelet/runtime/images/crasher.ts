/**
 * course/crasher — prints a few lines, then exits non-zero: CrashLoopBackOff on demand.
 * No upstream counterpart: a one-line shell loop in upstream's examples (`sh -c "sleep 2; exit 1"`).
 *
 * Flags: `--after` seconds before it exits (default 2), `--exit-code` (default 1).
 *
 * @upstream none — the example images of the course
 * @chapter 07-kubelet
 */
import { numberFlag, parseFlags } from "./flags.ts";

const { flags } = parseFlags(process.argv.slice(2));
const after = numberFlag(flags, "after", 2);
const exitCode = numberFlag(flags, "exit-code", 1);

console.log(`crasher: started, exiting with ${exitCode} in ${after} s`);
setTimeout(() => {
  console.error(`crasher: something went wrong, exit ${exitCode}`);
  process.exit(exitCode);
}, after * 1000);
