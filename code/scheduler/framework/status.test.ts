import { describe, expect, it } from "vitest";
import {
  asError,
  asStatus,
  Code,
  codeNames,
  isRejected,
  isSuccess,
  mergeStatuses,
  newStatus,
} from "./status.ts";

describe("Status", () => {
  it("numbers its codes as upstream does", () => {
    expect([Code.Success, Code.Error, Code.Unschedulable, Code.UnschedulableAndUnresolvable]).toEqual([
      0, 1, 2, 3,
    ]);
    expect([Code.Wait, Code.Skip, Code.Pending]).toEqual([4, 5, 6]);
    expect(codeNames[Code.Pending]).toBe("Pending");
  });

  it("treats no status as success", () => {
    expect(isSuccess(undefined)).toBe(true);
    expect(asError(undefined)).toBeUndefined();
    expect(isRejected(undefined)).toBe(false);
  });

  it("makes an Error status from an error, and back", () => {
    expect(asStatus(undefined)).toBeUndefined();
    const err = new Error("etcd is down");
    const s = asStatus(err)!;
    expect(s.code).toBe(Code.Error);
    expect(s.message()).toBe("etcd is down");
    expect(asError(s)).toBe(err);
  });

  it("joins reasons with a comma and says which codes reject", () => {
    const s = newStatus(Code.Unschedulable, "Insufficient cpu", "Insufficient memory");
    expect(s.message()).toBe("Insufficient cpu, Insufficient memory");
    expect(asError(s)?.message).toBe("Insufficient cpu, Insufficient memory");
    expect(
      [Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending].map((c) =>
        isRejected(newStatus(c)),
      ),
    ).toEqual([true, true, true]);
    expect([Code.Error, Code.Wait, Code.Skip].map((c) => isRejected(newStatus(c)))).toEqual([
      false,
      false,
      false,
    ]);
    expect(asError(newStatus(Code.Wait))).toBeUndefined();
    expect(asError(newStatus(Code.Skip))).toBeUndefined();
  });
});

describe("mergeStatuses", () => {
  it("lets Error beat UnschedulableAndUnresolvable beat Unschedulable, keeping every reason", () => {
    const a = newStatus(Code.Unschedulable, "Insufficient cpu").withPlugin("NodeResourcesFit");
    const b = newStatus(
      Code.UnschedulableAndUnresolvable,
      "node(s) didn't match Pod's node affinity/selector",
    ).withPlugin("NodeAffinity");
    const m = mergeStatuses([a, undefined, b])!;
    expect(m.code).toBe(Code.UnschedulableAndUnresolvable);
    expect(m.plugin).toBe("NodeAffinity");
    expect(m.reasons()).toEqual(["Insufficient cpu", "node(s) didn't match Pod's node affinity/selector"]);
    const e = mergeStatuses([b, asStatus(new Error("boom")), a])!;
    expect(e.code).toBe(Code.Error);
    expect(e.message()).toBe("boom, node(s) didn't match Pod's node affinity/selector, Insufficient cpu");
  });

  it("is nothing for no statuses and Success for successes; Wait beats Success", () => {
    expect(mergeStatuses([])).toBeUndefined();
    expect(mergeStatuses([undefined, undefined])!.code).toBe(Code.Success);
    expect(mergeStatuses([undefined, newStatus(Code.Wait)])!.code).toBe(Code.Wait);
    expect(mergeStatuses([newStatus(Code.Wait), newStatus(Code.Unschedulable)])!.code).toBe(
      Code.Unschedulable,
    );
  });
});
