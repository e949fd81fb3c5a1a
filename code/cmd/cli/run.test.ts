import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type CommandProcess, startCommand, waitFor } from "../testing/command-process.ts";
import { boolFlag, FlagError, intFlag, stringFlag } from "./flag.ts";
import { type CommandIO, command, parseCommand, type Running, run, usage } from "./run.ts";

/** A component that records what the command did to it. */
function fakeComponent() {
  const calls: string[] = [];
  let fail: () => void = () => {};
  const failed = new Promise<void>((resolve) => {
    fail = resolve;
  });
  let finishStop: () => void = () => {};
  const running: Running = {
    ready: "Serving on 127.0.0.1:1234",
    stop(signal) {
      calls.push(`stop ${signal}`);
      return new Promise<void>((resolve) => {
        finishStop = resolve;
      });
    },
    failed,
  };
  return { calls, running, fail: () => fail(), finishStop: () => finishStop() };
}

function makeCommand(start: (options: { port: number; name?: string }) => Promise<Running | undefined>) {
  return command({
    name: "demo-server",
    about: "a test command",
    syntax: "pflag",
    version: "demo-server v9.9.9",
    flags: {
      port: intFlag("port to serve on", 8080, {
        min: 0,
        max: 65535,
        hint: "use a port number from 0 to 65535",
      }),
      name: stringFlag("a name"),
      verbose: boolFlag("log more"),
    },
    options: (f, given) =>
      given.has("name") && f.name === "" ? new FlagError("demo-server", "--name may not be empty") : f,
    start: (options) => start(options),
  });
}

function capture(): { out: { stdout: string; stderr: string }; io: CommandIO } {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: (t) => {
        out.stdout += t;
      },
      stderr: (t) => {
        out.stderr += t;
      },
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("parseCommand", () => {
  const cmd = makeCommand(async () => undefined);

  it("gives the component's options, --help's usage, or --version's text", () => {
    expect(parseCommand(cmd, ["--port", "0"])).toEqual({
      run: { port: 0, name: undefined, verbose: false },
    });
    expect(parseCommand(cmd, ["--version"])).toEqual({ print: "demo-server v9.9.9" });
    const help = parseCommand(cmd, ["-h"]);
    expect(help).toEqual({ print: usage(cmd) });
    expect(usage(cmd).split("\n")).toEqual([
      "Usage: demo-server [flags]   (a test command)",
      "",
      "      --port     port to serve on (default 8080)",
      "      --name     a name",
      "      --verbose  log more",
      "      --version  print the version and exit",
      "  -h, --help     show this help",
    ]);
  });

  it("refuses arguments, and what the command's own options refuse", () => {
    expect(parseCommand(cmd, ["serve"])).toEqual(
      new FlagError("demo-server", '"demo-server" does not take any arguments, got ["serve"]'),
    );
    expect(parseCommand(cmd, ["--name="])).toEqual(new FlagError("demo-server", "--name may not be empty"));
  });
});

describe("run", () => {
  it("exits 2 with one line on stderr for a bad command line, starting nothing", async () => {
    const { out, io } = capture();
    let started = false;
    const cmd = makeCommand(async () => {
      started = true;
      return undefined;
    });
    expect(await run(cmd, ["--bogus"], io)).toBe(2);
    expect(out).toEqual({
      stdout: "",
      stderr: "demo-server: unknown flag: --bogus (see demo-server --help)\n",
    });
    expect(await run(cmd, ["--port=http"], io)).toBe(2);
    expect(started).toBe(false);
  });

  it("prints --help and --version to stdout and exits 0", async () => {
    const cmd = makeCommand(async () => undefined);
    const help = capture();
    expect(await run(cmd, ["--help"], help.io)).toBe(0);
    expect(help.out).toEqual({ stdout: `${usage(cmd)}\n`, stderr: "" });
    const version = capture();
    expect(await run(cmd, ["--version"], version.io)).toBe(0);
    expect(version.out.stdout).toBe("demo-server v9.9.9\n");
  });

  it("exits 1 when the component cannot start", async () => {
    const { io } = capture();
    expect(
      await run(
        makeCommand(async () => undefined),
        [],
        io,
      ),
    ).toBe(1);
  });

  it("prints the ready line, stops on the first signal, and exits 0 once the stop is done", async () => {
    const component = fakeComponent();
    const source = new EventEmitter();
    const exits: number[] = [];
    const { out, io } = capture();
    let options: unknown;
    const cmd = makeCommand(async (o) => {
      options = o;
      return component.running;
    });
    const code = run(cmd, ["--port=0", "--verbose"], io, { source, exit: (c) => exits.push(c) });
    await waitFor(() => out.stderr.includes("Serving on"), "the ready line", 2000);
    expect(options).toEqual({ port: 0, name: undefined, verbose: true });
    expect(out.stderr).toBe("Serving on 127.0.0.1:1234\n");
    source.emit("SIGTERM", "SIGTERM");
    await waitFor(() => component.calls.length > 0, "the stop", 2000);
    expect(component.calls).toEqual(["stop SIGTERM"]);
    component.finishStop();
    expect(await code).toBe(0);
    expect(exits).toEqual([]);
    expect(source.listenerCount("SIGINT") + source.listenerCount("SIGTERM")).toBe(0);
  });

  it("exits at once with 1 on a second signal while the stop is still running", async () => {
    const component = fakeComponent();
    const source = new EventEmitter();
    const exits: number[] = [];
    const { out, io } = capture();
    const code = run(
      makeCommand(async () => component.running),
      [],
      io,
      { source, exit: (c) => exits.push(c) },
    );
    await waitFor(() => out.stderr.includes("Serving on"), "the ready line", 2000);
    source.emit("SIGINT", "SIGINT");
    await waitFor(() => component.calls.length > 0, "the stop", 2000);
    source.emit("SIGINT", "SIGINT");
    expect(exits).toEqual([1]);
    expect(out.stderr).toContain("demo-server: a second signal during the shutdown; exiting at once\n");
    // (A real exit ends the process here; the fake one lets the test finish the stop.)
    component.finishStop();
    expect(await code).toBe(0);
  });

  it("exits 1 when the component stops on its own", async () => {
    const component = fakeComponent();
    const source = new EventEmitter();
    const { io } = capture();
    const code = run(
      makeCommand(async () => component.running),
      [],
      io,
      { source, exit: () => {} },
    );
    await tick();
    component.fail();
    expect(await code).toBe(1);
    expect(component.calls).toEqual([]);
    expect(source.listenerCount("SIGINT")).toBe(0);
  });

  it("stops a component once it has started when the signal came during its start", async () => {
    const component = fakeComponent();
    const source = new EventEmitter();
    const { io } = capture();
    let finishStart: () => void = () => {};
    const cmd = makeCommand(
      () =>
        new Promise((resolve) => {
          finishStart = () => resolve(component.running);
        }),
    );
    const code = run(cmd, [], io, { source, exit: () => {} });
    await tick();
    source.emit("SIGTERM", "SIGTERM");
    await tick();
    expect(component.calls).toEqual([]);
    finishStart();
    await waitFor(() => component.calls.length > 0, "the stop", 2000);
    expect(component.calls).toEqual(["stop SIGTERM"]);
    component.finishStop();
    expect(await code).toBe(0);
  });

  it("leaves no listener on process after it returns", async () => {
    const before = process.listenerCount("SIGINT") + process.listenerCount("SIGTERM");
    const { io } = capture();
    expect(
      await run(
        makeCommand(async () => undefined),
        [],
        io,
      ),
    ).toBe(1);
    expect(process.listenerCount("SIGINT") + process.listenerCount("SIGTERM")).toBe(before);
  });
});

describe("a command on cli/run.ts, as its own process, with real signals", () => {
  const slow = fileURLToPath(new URL("./testdata/slow-command.ts", import.meta.url));
  /** Starts the slow command, lets `drive` talk to it, and kills it whatever happens. */
  async function withSlowCommand(args: string[], drive: (p: CommandProcess) => Promise<void>) {
    const p = startCommand(slow, args);
    try {
      await drive(p);
    } finally {
      p.kill();
    }
  }

  it("stops cleanly on SIGTERM and exits 0", () =>
    withSlowCommand(["--stop-ms=200"], async (p) => {
      await p.waitForStderr("ready to serve\n");
      p.child.kill("SIGTERM");
      expect(await p.waitForExit()).toBe(0);
      expect(p.stderr()).toBe("starting\nready to serve\nreceived SIGTERM; stopping\nstopped\n");
    }));

  it("exits 1 at once on a second SIGINT while the clean stop hangs", () =>
    withSlowCommand(["--stop-ms=-1"], async (p) => {
      await p.waitForStderr("ready to serve\n");
      p.child.kill("SIGINT");
      await p.waitForStderr("received SIGINT; stopping\n");
      p.child.kill("SIGINT");
      expect(await p.waitForExit()).toBe(1);
      expect(p.stderr()).toContain("slow-command: a second signal during the shutdown; exiting at once\n");
      expect(p.stderr()).not.toContain("stopped");
    }));

  it("stops once started when SIGTERM comes during the start", () =>
    withSlowCommand(["--start-ms=1500"], async (p) => {
      await p.waitForStderr("starting\n");
      p.child.kill("SIGTERM");
      expect(await p.waitForExit()).toBe(0);
      expect(p.stderr()).toBe("starting\nready to serve\nreceived SIGTERM; stopping\nstopped\n");
    }));

  it("exits 2 with one line for a bad flag", () =>
    withSlowCommand(["--stop-ms=soon"], async (p) => {
      expect(await p.waitForExit()).toBe(2);
      expect(p.stderr()).toBe('slow-command: invalid argument "soon" for "--stop-ms" flag: use -1 or more\n');
    }));
});
