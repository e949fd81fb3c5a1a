import { describe, expect, it } from "vitest";
import { doExecProbe, type ExecSync, ExecTimeoutError, maxReadLength } from "./exec.ts";

/** An ExecSync that answers from a table, recording what it was asked. */
function runtime(answer: (cmd: string[]) => Awaited<ReturnType<ExecSync>> | Error) {
  const calls: { cmd: string[]; timeoutMs: number }[] = [];
  const execSync: ExecSync = async (cmd, timeoutMs) => {
    calls.push({ cmd, timeoutMs });
    const a = answer(cmd);
    if (a instanceof Error) throw a;
    return a;
  };
  return { execSync, calls };
}

describe("doExecProbe", () => {
  it("is a success on exit 0 and passes the command and timeout to the runtime", async () => {
    const rt = runtime(() => ({ exitCode: 0, stdout: "fine\n", stderr: "" }));
    expect(await doExecProbe(rt.execSync, ["cat", "/tmp/healthy"], 1000)).toEqual({
      result: "success",
      output: "fine\n",
    });
    expect(rt.calls).toEqual([{ cmd: ["cat", "/tmp/healthy"], timeoutMs: 1000 }]);
  });

  it("is a failure on any other exit, with stdout then stderr as output", async () => {
    const rt = runtime(() => ({
      exitCode: 1,
      stdout: "out;",
      stderr: "cat: /tmp/healthy: No such file or directory\n",
    }));
    expect(await doExecProbe(rt.execSync, ["cat", "/tmp/healthy"], 1000)).toEqual({
      result: "failure",
      output: "out;cat: /tmp/healthy: No such file or directory\n",
    });
  });

  it("keeps only the first 10 KiB of output", async () => {
    const rt = runtime(() => ({ exitCode: 0, stdout: "a".repeat(maxReadLength), stderr: "b".repeat(100) }));
    const out = await doExecProbe(rt.execSync, ["spam"], 1000);
    expect(out.output).toBe("a".repeat(maxReadLength));
  });

  it("is a failure whose output is the runtime's timeout text when the command outlives the timeout", async () => {
    const rt = runtime((cmd) => new ExecTimeoutError(cmd, 1000));
    expect(await doExecProbe(rt.execSync, ["sleep", "60"], 1000)).toEqual({
      result: "failure",
      output: 'command "sleep 60" timed out',
    });
  });

  it("is unknown, with the error, when the runtime fails otherwise", async () => {
    const rt = runtime(() => new Error("container not running"));
    const out = await doExecProbe(rt.execSync, ["true"], 1000);
    expect(out.result).toBe("unknown");
    expect(out.error?.message).toBe("container not running");
  });
});
