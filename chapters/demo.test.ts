import { describe, expect, it } from "vitest";
import { colorEnabled, cut, demoOutput, runTool, within } from "./demo.ts";
import { runDemoToEnd } from "./demo-process.ts";

/** A stream that keeps what is written; `isTTY` as a terminal, a pipe or a file would say. */
function stream(isTTY: boolean | undefined) {
  const s = {
    text: "",
    isTTY,
    write(t: string) {
      s.text += t;
      return true;
    },
  };
  return s;
}

describe("colour", () => {
  it("colours only a terminal, and not when NO_COLOR is set to anything but ''", () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "0" })).toBe(false);
    // no-color.org: an empty NO_COLOR does not disable colour.
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
  });

  it("writes plain text to a pipe and SGR codes to a terminal, each closed by its own reset", () => {
    const pipe = demoOutput(stream(undefined), {});
    expect(pipe.bold(`a ${pipe.cyan("b")} c`)).toBe("a b c");
    const tty = demoOutput(stream(true), {});
    // Cyan's reset (39) leaves bold on for " c"; bold's (22) ends it.
    expect(tty.bold(`a ${tty.cyan("b")} c`)).toBe("\x1b[1ma \x1b[36mb\x1b[39m c\x1b[22m");
    expect(tty.dim("x")).toBe("\x1b[2mx\x1b[22m");
    expect(demoOutput(stream(true), { NO_COLOR: "1" }).red("x")).toBe("x");
  });
});

describe("steps and lines", () => {
  it("numbers the steps and indents what is said under them", () => {
    const s = stream(false);
    const out = demoOutput(s, {});
    out.heading("The demo");
    out.step("First");
    out.say("a line");
    out.note("why");
    out.step("Second");
    expect(s.text).toBe("The demo\n\n1. First\n   a line\n   why\n\n2. Second\n");
  });

  it("cuts a long line and marks the cut", () => {
    expect(cut("abcdef", 4)).toBe("abc…");
    expect(cut("abcd", 4)).toBe("abcd");
  });
});

describe("waits", () => {
  it("gives up waiting after the time it was given, naming what it waited for", async () => {
    expect(await within(1000, Promise.resolve(7), "seven")).toBe(7);
    await expect(within(20, new Promise(() => {}), "the event")).rejects.toThrow(
      "timed out after 20 ms waiting for the event",
    );
  });

  it("runs a tool to its end: stdout, or why it failed", async () => {
    expect(await runTool(process.execPath, ["-e", "process.stdout.write('hi')"])).toBe("hi");
    await expect(
      runTool(process.execPath, ["-e", "process.stderr.write('bad input'); process.exit(3)"]),
    ).rejects.toThrow(/exited 3: bad input$/);
    await expect(runTool("no-such-tool-here", [])).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("a demo's flags", () => {
  it("refuses an unknown flag in one line with exit 2, and lists its flags for --help", async () => {
    const bad = await runDemoToEnd("00-life-of-a-pod", ["--bogus"]);
    expect(bad).toEqual({
      code: 2,
      stdout: "",
      stderr: "npm run chapter -- 0: unknown flag: --bogus (see npm run chapter -- 0 --help)\n",
    });
    const help = await runDemoToEnd("00-life-of-a-pod", ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(
      "Usage: npm run chapter -- 0 [flags]\n\n      --setup  only the setup check\n  -h, --help   show this help\n",
    );
  }, 30_000);
});

describe("statusLine", () => {
  it("names the HTTP status and, where it differs, the reason: never `410 Expired`", async () => {
    const { statusLine } = await import("./demo.ts");
    expect(statusLine({ code: 409, reason: "Conflict", message: "m" })).toBe("409 Conflict: m");
    expect(statusLine({ code: 404, reason: "NotFound", message: "m" })).toBe("404 Not Found: m");
    expect(statusLine({ code: 410, reason: "Expired", message: "too old" })).toBe(
      "410 Gone, reason Expired: too old",
    );
    expect(statusLine({ code: 422, reason: "Invalid", message: "m" })).toBe(
      "422 Unprocessable Entity, reason Invalid: m",
    );
  });
});
