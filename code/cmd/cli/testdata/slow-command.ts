/**
 * Slow command — a command built on cli/run.ts whose start and clean stop take as long as its
 * flags say, for run.test.ts to send it real signals.
 *
 * Solves: "the first signal stops cleanly, the second exits at once with 1" and "a signal during
 * the start stops the component once it has started" can only be tested on a real process that
 * receives real signals; a component that stops in milliseconds would hide both.
 *
 * Usage: node --import tsx code/cmd/cli/testdata/slow-command.ts [--start-ms N] [--stop-ms N]
 *   (--stop-ms -1: the clean stop never ends)
 *
 * @upstream none — a test helper
 * @chapter 01-etcd-watch
 */
import { intFlag } from "../flag.ts";
import { command, isEntryPoint, run } from "../run.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const slowCommand = command({
  name: "slow-command",
  about: "a test command",
  syntax: "pflag",
  flags: {
    "start-ms": intFlag("how long the start takes", 0, { min: 0, hint: "use a non-negative integer" }),
    "stop-ms": intFlag("how long the clean stop takes; -1: forever", 0, { min: -1, hint: "use -1 or more" }),
  },
  options: (f) => ({ startMs: f["start-ms"], stopMs: f["stop-ms"] }),
  async start({ startMs, stopMs }, io) {
    io.stderr("starting\n");
    await sleep(startMs);
    // What a server's listening socket does: keep the process alive until the stop lets go.
    const serving = setInterval(() => {}, 1000);
    return {
      ready: "ready to serve",
      async stop(signal) {
        io.stderr(`received ${signal}; stopping\n`);
        await (stopMs < 0 ? new Promise(() => {}) : sleep(stopMs));
        clearInterval(serving);
        io.stderr("stopped\n");
      },
    };
  },
});

if (isEntryPoint(import.meta.url)) process.exitCode = await run(slowCommand, process.argv.slice(2));
