import { describe, expect, it } from "vitest";
import { ReasonCache } from "./reason-cache.ts";

describe("ReasonCache", () => {
  it("keeps the last failed start of each container and forgets it on success", () => {
    const rc = new ReasonCache();
    rc.update("u", {
      syncResults: [
        { action: "StartContainer", target: "a", error: "ErrImagePull", message: "not found" },
        { action: "KillContainer", target: "b", error: "KillContainerError", message: "x" },
      ],
    });
    expect(rc.get("u", "a")).toEqual({ err: "ErrImagePull", message: "not found" });
    expect(rc.get("u", "b")).toBeUndefined(); // only StartContainer results count
    rc.update("u", { syncResults: [{ action: "StartContainer", target: "a", error: "", message: "" }] });
    expect(rc.get("u", "a")).toBeUndefined();
  });

  it("drops the least recently used entry past its size", () => {
    const rc = new ReasonCache(2);
    rc.add("u", "a", "E", "");
    rc.add("u", "b", "E", "");
    rc.get("u", "a");
    rc.add("u", "c", "E", "");
    expect([rc.get("u", "a")?.err, rc.get("u", "b")?.err, rc.get("u", "c")?.err]).toEqual([
      "E",
      undefined,
      "E",
    ]);
  });
});
