/**
 * newSchedulerCommand(withPlugin(…)): the command an out-of-tree scheduler is built from carries
 * its plugins to the scheduler it builds, refuses one name registered twice, and is otherwise
 * kube-scheduler (same flags, same errors). The live use — a learner's plugin scheduling pods in a
 * real cluster — is exercise 8.4 (exercises/08-cluster/04-scheduler-profile).
 */
import { describe, expect, it } from "vitest";
import { FlagError } from "./cli/flag.ts";
import { parseCommand } from "./cli/run.ts";
import { newSchedulerCommand, parseSchedulerFlags, withPlugin } from "./kube-scheduler.ts";

const factory = () => ({ name: () => "Mine" });

describe("newSchedulerCommand(withPlugin(name, factory))", () => {
  it("hands the plugins to the scheduler it builds", () => {
    const inv = parseCommand(newSchedulerCommand(withPlugin("Mine", factory)), [
      "--master=http://127.0.0.1:1",
    ]);
    if (!("run" in inv)) throw new Error(`expected options, got ${JSON.stringify(inv)}`);
    expect([...(inv.run.outOfTreeRegistry ?? new Map()).keys()]).toEqual(["Mine"]);
  });

  it("refuses a name registered twice, with upstream's Registry.Register message", () => {
    expect(() => newSchedulerCommand(withPlugin("Mine", factory), withPlugin("Mine", factory))).toThrow(
      "a plugin named Mine already exists",
    );
  });

  it("is kube-scheduler otherwise: the same flags and errors, and no out-of-tree plugins by default", () => {
    const inv = parseCommand(newSchedulerCommand(), []);
    expect(inv).toBeInstanceOf(FlagError);
    expect(String((inv as FlagError).message)).toBe(String((parseSchedulerFlags([]) as FlagError).message));
    const plain = parseSchedulerFlags(["--master=http://127.0.0.1:1"]);
    expect("run" in plain && plain.run.outOfTreeRegistry).toBeFalsy();
  });
});
