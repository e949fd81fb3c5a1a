import { describe, expect, it } from "vitest";
import { defaultLeaderElectionConfiguration } from "../../leaderelection/config.ts";
import { FlagError, flagUsages, parseFlags } from "./flag.ts";
import {
  applyLeaderElectionFlags,
  leaderElectionFlags,
  leaderElectionIdentity,
  leaderElectionProblem,
} from "./leader-election-flags.ts";

const defaults = defaultLeaderElectionConfiguration("kube-scheduler");
const set = { name: "kube-scheduler", syntax: "pflag" as const, flags: leaderElectionFlags(defaults) };

function parse(argv: string[]) {
  const r = parseFlags(set, argv);
  if (r instanceof FlagError) throw r;
  return r;
}

describe("leader-election flags", () => {
  it("defaults as kube-scheduler's NewOptions: elect, 15s/10s/2s, leases, kube-system/<component>", () => {
    const { values } = parse([]);
    expect(values).toEqual({
      "leader-elect": true,
      "leader-elect-lease-duration": 15_000,
      "leader-elect-renew-deadline": 10_000,
      "leader-elect-retry-period": 2_000,
      "leader-elect-resource-lock": "leases",
      "leader-elect-resource-name": "kube-scheduler",
      "leader-elect-resource-namespace": "kube-system",
    });
    expect(defaultLeaderElectionConfiguration("kube-controller-manager").resourceName).toBe(
      "kube-controller-manager",
    );
  });

  it("reads Go durations and says Go's words for a bad one", () => {
    const { values } = parse(["--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline", "1.5s"]);
    expect(values["leader-elect-lease-duration"]).toBe(2_000);
    expect(values["leader-elect-renew-deadline"]).toBe(1_500);
    expect(() => parse(["--leader-elect-retry-period=soon"])).toThrow(
      'kube-scheduler: invalid argument "soon" for "--leader-elect-retry-period" flag: time: invalid duration "soon"',
    );
  });

  it("--help shows upstream's help and defaults", () => {
    const lines = flagUsages(set);
    expect(lines.find((l) => l.includes("--leader-elect-lease-duration"))).toMatch(/\(default 15s\)$/);
    expect(lines.find((l) => l.includes("--leader-elect-resource-lock"))).toContain(
      "Supported options are 'leases'. (default \"leases\")",
    );
    expect(lines.find((l) => l.includes("--leader-elect "))).toMatch(/high availability\. \(default true\)$/);
  });

  it("ApplyLeaderElectionTo: only the flags given override the file's block", () => {
    const file = { ...defaults, leaseDurationMs: 30_000, resourceName: "from-file", leaderElect: false };
    const none = parse([]);
    expect(applyLeaderElectionFlags(none.values, none.given, file)).toEqual(file);
    const some = parse(["--leader-elect", "--leader-elect-resource-name=from-flag"]);
    expect(applyLeaderElectionFlags(some.values, some.given, file)).toEqual({
      ...file,
      leaderElect: true,
      resourceName: "from-flag",
    });
  });

  it("only Lease locks, and the elector's duration rules, in upstream's words", () => {
    expect(leaderElectionProblem(defaults)).toBeUndefined();
    expect(leaderElectionProblem({ ...defaults, resourceLock: "endpoints" })).toBe(
      "couldn't create resource lock: endpoints lock is removed, migrate to leases",
    );
    expect(leaderElectionProblem({ ...defaults, resourceLock: "etcd" })).toBe(
      "couldn't create resource lock: Invalid lock-type etcd",
    );
    expect(leaderElectionProblem({ ...defaults, renewDeadlineMs: 15_000 })).toBe(
      "couldn't create leader elector: leaseDuration must be greater than renewDeadline",
    );
    // 2 s × JitterFactor 1.2 = 2.4 s ≥ 2.4 s: refused.
    expect(leaderElectionProblem({ ...defaults, renewDeadlineMs: 2_400 })).toBe(
      "couldn't create leader elector: renewDeadline must be greater than retryPeriod*JitterFactor",
    );
    expect(leaderElectionProblem({ ...defaults, renewDeadlineMs: 2_401 })).toBeUndefined();
    // Not electing: nothing is checked (validation skips the block, as upstream's).
    expect(leaderElectionProblem({ ...defaults, leaderElect: false, resourceLock: "etcd" })).toBeUndefined();
  });

  it("identity: <hostname>_<uuid>, different for two processes on one host", () => {
    expect(leaderElectionIdentity("node-1", "abc")).toBe("node-1_abc");
    const a = leaderElectionIdentity();
    expect(a).toMatch(/^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(leaderElectionIdentity()).not.toBe(a);
  });
});
