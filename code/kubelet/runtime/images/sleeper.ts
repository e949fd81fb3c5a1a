/**
 * course/sleeper — runs until signalled; shows what a grace period is for.
 * No upstream counterpart: upstream's examples use `sleep 3600` (which, as PID 1, ignores SIGTERM).
 *
 * Flags:
 * - `--term-delay=S` — on SIGTERM, "shut down" for S seconds, then exit 143 (128 + SIGTERM), so a
 *   terminationGracePeriodSeconds longer than S ends it by itself and a shorter one ends in SIGKILL.
 * - `--ignore-sigterm` — ignore SIGTERM entirely, as `sleep` running as PID 1 does: only the SIGKILL
 *   after the grace period ends it (exit 137).
 *
 * @upstream none — the example images of the course
 * @chapter 07-kubelet
 */
import { numberFlag, parseFlags } from "./flags.ts";

const { flags } = parseFlags(process.argv.slice(2));
const termDelay = numberFlag(flags, "term-delay", 0);
const ignore = flags.has("ignore-sigterm");

console.log(`sleeper: started (pid ${process.pid})`);
// A timer keeps the event loop — and so the process — alive.
const keepAlive = setInterval(() => {}, 1 << 30);

process.on("SIGTERM", () => {
  if (ignore) {
    console.log("sleeper: SIGTERM ignored");
    return;
  }
  console.log(`sleeper: SIGTERM, shutting down in ${termDelay} s`);
  setTimeout(() => {
    clearInterval(keepAlive);
    console.log("sleeper: bye");
    process.exit(143);
  }, termDelay * 1000);
});
