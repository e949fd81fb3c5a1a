/**
 * A leader-election candidate as its own process — the leader-election benchmark's replica:
 * the real LeaderElector over a real LeaseLock and the course's client, whose one piece of work
 * as leader is a single API write (a merge patch of a ConfigMap naming itself), so that the
 * moment a new leader starts acting is visible at the API server, in its audit log.
 *
 * Solves: a failover measured honestly needs a leader that can really die — `kill -9` of a
 * process, no goodbye, no release — and followers that learn of it only the way real ones do,
 * by the Lease going silent. So each candidate is a separate process the benchmark can SIGKILL.
 *
 * Invariants:
 * - every request this process sends carries the User-Agent `leaderelection-bench/<id>`, so the
 *   API server's audit log attributes each read and write to one candidate (upstream's lock
 *   client sends `<binary>/<version> …/leader-election` for every replica alike, which would not);
 * - the lock's client times out at max(1 s, renewDeadline / 2), as resourcelock.NewFromKubeconfig;
 * - the jitter of the acquire loop comes from `--seed` (mulberry32), not Math.random;
 * - no releaseOnCancel: a candidate never hands over politely; it is killed.
 *
 * What upstream's example does differently: client-go's examples/leader-election exits when it
 * loses the lease (a pod would then be restarted by its kubelet); this candidate runs for the
 * lease again at once, which is the same thing without a new process.
 *
 * Flags (as the example's, plus the durations): --server URL, --id, --lease-lock-name,
 * --lease-lock-namespace, --configmap NAME (the work), --lease-duration / --renew-deadline /
 * --retry-period in milliseconds, --seed N. Prints `leading`, `stopped leading` on stdout.
 *
 * @upstream kubernetes/client-go examples/leader-election/main.go (the example program: flags id, lease-lock-name, lease-lock-namespace; RunOrDie with a LeaseLock)
 * @chapter 06-leader-election
 */

import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { MergePatchType } from "../../client/rest/request.ts";
import { mulberry32 } from "../../testing/random.ts";
import { newLeaderElector } from "../leader-elector.ts";
import { LeaseLock } from "../resourcelock/lease-lock.ts";

function flag(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? undefined : process.argv[i + 1];
  if (v === undefined) {
    console.error(`candidate: missing --${name}`);
    process.exit(2);
  }
  return v;
}

const server = flag("server");
const id = flag("id");
const namespace = flag("lease-lock-namespace");
const leaseName = flag("lease-lock-name");
const configMap = flag("configmap");
const leaseDuration = Number(flag("lease-duration"));
const renewDeadline = Number(flag("renew-deadline"));
const retryPeriod = Number(flag("retry-period"));
const random = mulberry32(Number(flag("seed")));

const userAgent = `leaderelection-bench/${id}`;
// Two clients, as a component has: the lock's own (short timeout) and the one its work uses.
// No client-side rate limit (qps −1): at a 0.2 s retry period the default 5 requests/s would
// throttle the election itself, which is not what is measured.
const lockClient = newForConfig({
  host: server,
  userAgent,
  qps: -1,
  timeout: Math.max(1000, renewDeadline / 2),
});
const workClient = newForConfig({ host: server, userAgent, qps: -1 });

const lock = new LeaseLock({
  leaseMeta: { namespace, name: leaseName },
  client: lockClient.coordinationV1,
  lockConfig: { identity: id },
});

/** The work: one write that says who leads. Retried while leading, in case the server hiccups. */
async function firstAction(signal: AbortSignal): Promise<void> {
  console.log("leading");
  while (!signal.aborted) {
    try {
      await workClient.coreV1
        .configMaps(namespace)
        .patch(configMap, MergePatchType, { data: { leader: id } }, { signal });
      return;
    } catch (err) {
      console.error(`candidate ${id}: first action failed: ${err instanceof Error ? err.message : err}`);
      await new Promise((r) => setTimeout(r, retryPeriod));
    }
  }
}

const never = new AbortController().signal; // this process stops only by a signal from outside
// The real clock's timers are unref'd (a component's servers keep it alive); this process has
// no server, so one ref'd timer keeps it running between the elector's sleeps.
setInterval(() => {}, 2 ** 30);
for (;;) {
  await newLeaderElector({
    lock,
    leaseDuration,
    renewDeadline,
    retryPeriod,
    name: leaseName,
    random,
    callbacks: {
      onStartedLeading: (signal) => firstAction(signal),
      onStoppedLeading: () => console.log("stopped leading"),
    },
  }).run(never);
}
