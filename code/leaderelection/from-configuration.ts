/**
 * newLeaderElectorFromConfiguration — a component's elector from its `leaderElection` block:
 * the Lease lock its flags name, and the elector with the block's three durations.
 * Mirrors what kube-scheduler (cmd/kube-scheduler/app/options) and kube-controller-manager
 * (cmd/kube-controller-manager/app) each do before leaderelection.RunOrDie.
 *
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/options.go (Config, makeLeaderElectionConfig)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (leaderElectAndRun)
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/interface.go (NewFromKubeconfig)
 * @chapter 06-leader-election
 *
 * Solves: both binaries turned the same configuration into a lock and an elector line by line;
 * here once, so the durations and the lock's client timeout cannot drift apart between them.
 *
 * Invariants: the lock's client times out at max(1 s, renewDeadline / 2), as NewFromKubeconfig;
 * an unknown lock type throws before any request; the component's event recorder, if any, goes
 * into the lock's ResourceLockConfig, so "<identity> became leader" and "stopped leading" are
 * Events on the Lease (`kubectl describe lease`).
 */
import type { Config } from "../client/rest/config.ts";
import type { LeaderElectionConfiguration } from "./config.ts";
import { type LeaderElectionConfig, type LeaderElector, newLeaderElector } from "./leader-elector.ts";
import type { EventRecorder } from "./resourcelock/interface.ts";
import { newLockFromConfig } from "./resourcelock/lease-lock.ts";

/** What the component decides itself: its callbacks, name, health check, release on stop. */
export type ComponentElection = Omit<
  LeaderElectionConfig,
  "lock" | "leaseDuration" | "renewDeadline" | "retryPeriod"
>;

export function newLeaderElectorFromConfiguration(
  le: LeaderElectionConfiguration,
  rest: Config,
  identity: string,
  component: ComponentElection,
  eventRecorder?: EventRecorder,
): LeaderElector {
  const lock = newLockFromConfig(
    le.resourceLock,
    le.resourceNamespace,
    le.resourceName,
    { identity, eventRecorder },
    rest,
    le.renewDeadlineMs,
  );
  return newLeaderElector({
    ...component,
    lock,
    leaseDuration: le.leaseDurationMs,
    renewDeadline: le.renewDeadlineMs,
    retryPeriod: le.retryPeriodMs,
  });
}
