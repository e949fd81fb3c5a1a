import { describe, expect, it } from "vitest";
import { computeClusterID, computeMemberID, formatID, singleMemberCluster } from "./cluster.ts";

describe("membership ids", () => {
  it("are those a fresh single-member etcd with default settings reports", () => {
    const member = computeMemberID(["http://localhost:2380"], "etcd-cluster");
    expect(formatID(member)).toBe("8e9e05c52164694d");
    expect(formatID(computeClusterID([member]))).toBe("cdf818194e3a8c32");
  });

  it("do not depend on the order of peer URLs or members", () => {
    const a = computeMemberID(["http://a:2380", "http://b:2380"], "t");
    expect(computeMemberID(["http://b:2380", "http://a:2380"], "t")).toBe(a);
    const b = computeMemberID(["http://c:2380"], "t");
    expect(computeClusterID([a, b])).toBe(computeClusterID([b, a]));
  });

  it("depend on the peer URL and token, not on the member name", () => {
    const one = singleMemberCluster("n1", ["http://127.0.0.1:2379"]);
    const two = singleMemberCluster("n2", ["http://127.0.0.1:2379"]);
    expect(one.id).toBe(two.id);
    expect(one.members[0]).toMatchObject({ name: "n1", peerURLs: ["http://localhost:2380"] });
    expect(singleMemberCluster("n1", [], "http://10.0.0.1:2380").id).not.toBe(one.id);
  });
});
