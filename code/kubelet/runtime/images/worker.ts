/**
 * course/worker — a batch job: works for `--seconds`, then exits with `--exit-code`.
 * No upstream counterpart: upstream's Job examples compute digits of pi in perl.
 *
 * Flags: `--seconds` (default 5), `--exit-code` (default 0). One progress line per second.
 *
 * @upstream none — the example images of the course
 * @chapter 07-kubelet
 */
import { numberFlag, parseFlags } from "./flags.ts";

const { flags } = parseFlags(process.argv.slice(2));
const seconds = numberFlag(flags, "seconds", 5);
const exitCode = numberFlag(flags, "exit-code", 0);

let done = 0;
console.log(`worker: working for ${seconds} s`);
const tick = setInterval(() => {
  done++;
  console.log(`worker: ${done}/${seconds}`);
  if (done >= seconds) finish();
}, 1000);
if (seconds <= 0) finish();

function finish(): void {
  clearInterval(tick);
  console.log(`worker: done, exit ${exitCode}`);
  process.exit(exitCode);
}
