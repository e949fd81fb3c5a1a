import { describe, expect, it } from "vitest";
import { exitStatus } from "./process-exit.ts";

describe("exitStatus", () => {
  it("believes the shim's record first, then the exit seen as parent, then the signal sent", () => {
    const recorded = { exitCode: 3, finishedAt: 1 };
    expect(exitStatus(recorded, { code: null, signal: "SIGKILL" }, "SIGKILL")).toEqual({
      exitCode: 3,
      reason: "Error",
      message: "",
    });
    expect(
      exitStatus(
        { exitCode: 137, reason: "OOMKilled", finishedAt: 1 },
        { code: null, signal: "SIGKILL" },
        undefined,
      ),
    ).toMatchObject({
      exitCode: 137,
      reason: "OOMKilled",
    });
    expect(exitStatus(undefined, { code: null, signal: "SIGTERM" }, "SIGKILL")).toMatchObject({
      exitCode: 143,
      reason: "Error",
    });
    expect(exitStatus(undefined, { code: 0, signal: null }, undefined)).toMatchObject({
      exitCode: 0,
      reason: "Completed",
    });
    expect(exitStatus(undefined, undefined, "SIGKILL")).toMatchObject({ exitCode: 137, reason: "Error" });
    expect(exitStatus(undefined, undefined, "SIGTERM")).toMatchObject({ exitCode: 143, reason: "Error" });
  });

  it("says 255/Unknown when nothing at all was recorded, as containerd does", () => {
    expect(exitStatus(undefined, undefined, undefined)).toMatchObject({ exitCode: 255, reason: "Unknown" });
  });
});
