import { describe, expect, it } from "vitest";
import { FakeClock } from "../client/util/clock.ts";
import {
  ControllerExpectations,
  ExpectationsTimeoutMs,
  UIDTrackingControllerExpectations,
} from "./expectations.ts";

describe("ControllerExpectations", () => {
  it("holds a controller back until every expected creation was observed", () => {
    const e = new ControllerExpectations(new FakeClock());
    expect(e.satisfiedExpectations("ns/web")).toBe(true); // never set
    e.expectCreations("ns/web", 3);
    expect(e.satisfiedExpectations("ns/web")).toBe(false);
    e.creationObserved("ns/web");
    e.creationObserved("ns/web");
    expect(e.satisfiedExpectations("ns/web")).toBe(false);
    e.creationObserved("ns/web");
    expect(e.satisfiedExpectations("ns/web")).toBe(true);
    e.creationObserved("ns/web"); // an extra observation goes below zero and stays satisfied
    expect(e.getExpectations("ns/web")?.add).toBe(-1);
    expect(e.satisfiedExpectations("ns/web")).toBe(true);
  });

  it("expires after five minutes, so a lost watch event cannot stall the controller", () => {
    const clock = new FakeClock(1000);
    const e = new ControllerExpectations(clock);
    e.expectDeletions("ns/web", 2);
    clock.step(ExpectationsTimeoutMs);
    expect(e.satisfiedExpectations("ns/web")).toBe(false);
    clock.step(1);
    expect(e.satisfiedExpectations("ns/web")).toBe(true);
  });

  it("setting expectations replaces the old ones; deleteExpectations forgets them", () => {
    const e = new ControllerExpectations(new FakeClock());
    e.expectCreations("k", 5);
    e.expectDeletions("k", 1);
    expect(e.getExpectations("k")).toMatchObject({ add: 0, del: 1 });
    e.deleteExpectations("k");
    expect(e.getExpectations("k")).toBeUndefined();
  });
});

describe("UIDTrackingControllerExpectations", () => {
  it("counts each expected pod's deletion once, and ignores pods it did not delete", () => {
    const e = new UIDTrackingControllerExpectations(new ControllerExpectations(new FakeClock()));
    e.expectDeletions("ns/web", ["ns/a", "ns/b"]);
    e.deletionObserved("ns/web", "ns/a"); // deletionTimestamp set
    e.deletionObserved("ns/web", "ns/a"); // then the delete itself
    e.deletionObserved("ns/web", "ns/zzz");
    expect(e.satisfiedExpectations("ns/web")).toBe(false);
    expect([...(e.getUIDs("ns/web") ?? [])]).toEqual(["ns/b"]);
    e.deletionObserved("ns/web", "ns/b");
    expect(e.satisfiedExpectations("ns/web")).toBe(true);
    e.deleteExpectations("ns/web");
    expect(e.getUIDs("ns/web")).toBeUndefined();
  });
});
