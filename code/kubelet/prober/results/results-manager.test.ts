import { describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { ResultsManager, type Update } from "./results-manager.ts";

const pod: Pod = { metadata: { name: "p", namespace: "default", uid: "uid-1" }, spec: { containers: [] } };

describe("ResultsManager", () => {
  it("publishes the first result and each change, not a repeat", () => {
    const m = new ResultsManager();
    const seen: Update[] = [];
    m.onUpdate((u) => seen.push(u));
    m.set("c1", "Failure", pod);
    m.set("c1", "Failure", pod);
    m.set("c1", "Success", pod);
    m.set("c1", "Success", pod);
    m.set("c2", "Success", pod);
    expect(seen.map((u) => [u.containerID, u.result, u.podUID])).toEqual([
      ["c1", "Failure", "uid-1"],
      ["c1", "Success", "uid-1"],
      ["c2", "Success", "uid-1"],
    ]);
    expect(m.get("c1")).toBe("Success");
  });

  it("forgets a removed container silently, so its next result is new again", () => {
    const m = new ResultsManager();
    const seen: Update[] = [];
    const unsubscribe = m.onUpdate((u) => seen.push(u));
    m.set("c1", "Success", pod);
    m.remove("c1");
    expect(m.get("c1")).toBeUndefined();
    m.set("c1", "Success", pod);
    expect(seen.length).toBe(2);
    unsubscribe();
    m.set("c1", "Failure", pod);
    expect(seen.length).toBe(2);
  });
});
