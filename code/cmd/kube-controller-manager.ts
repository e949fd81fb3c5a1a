/**
 * kube-controller-manager — the command: connect to the API server with `--kubeconfig`, start the
 * controllers `--controllers` names, run until SIGTERM or SIGINT. Upstream:
 * NewControllerManagerCommand in cmd/kube-controller-manager/app/controllermanager.go.
 *
 * Solves:
 * - a learner starts it as the real one (`kube-controller-manager
 *   --kubeconfig=pki/kube-controller-manager.kubeconfig --use-service-account-credentials`) and
 *   sees which controllers started, in upstream's log words;
 * - a wrong `--controllers` name, or no way to reach a server, is one line that says the fix,
 *   before anything starts (exit 2, cli/run.ts);
 * - SIGTERM stops the informers and shuts every queue down, then exits 0.
 *
 * Flags, named and defaulted as upstream's in 1.32 (options/*.go):
 * - `--kubeconfig` (required unless `--master`), `--master` (overrides the kubeconfig's server);
 * - `--controllers` (default `*`): `*` all enabled by default, `name` enables, `-name` disables;
 * - `--concurrent-replicaset-syncs` 5, `--concurrent-deployment-syncs` 5, `--concurrent-gc-syncs`
 *   20, `--concurrent-namespace-syncs` 10, `--concurrent-serviceaccount-token-syncs` 5,
 *   `--concurrent-resource-quota-syncs` 5, `--resource-quota-sync-period` 5m0s;
 * - chapter 7: `--concurrent-endpoint-syncs` 5, `--endpoint-updates-batch-period` 0s;
 *   `--node-monitor-period` 5s, `--node-monitor-grace-period` 50s (40s before 1.32),
 *   `--node-startup-grace-period` 1m0s, `--node-eviction-rate` 0.1,
 *   `--secondary-node-eviction-rate` 0.01, `--large-cluster-size-threshold` 50,
 *   `--unhealthy-zone-threshold` 0.55 — tests and demos shorten the periods with these flags;
 * - chapter 8: `--tracing-config-file` — a COURSE FLAG (upstream 1.32's kube-controller-manager
 *   has no tracing): the API server's TracingConfiguration file; the ReplicaSet controller's
 *   syncs become `syncReplicaSet` spans, parents of the pod creations they send;
 * - `--kube-api-qps` 20, `--kube-api-burst` 30: one token bucket for the whole process;
 * - `--use-service-account-credentials` (default false): each controller as its own
 *   ServiceAccount in kube-system (code/controllers/client-builder.ts);
 * - chapter 6: the seven `--leader-elect*` flags (cli/leader-election-flags.ts; default: elect,
 *   15s/10s/2s, Lease kube-system/kube-controller-manager); `--secure-port` 10257 and
 *   `--bind-address` 0.0.0.0 for `/healthz` (0: no serving).
 *
 * Leader election (chapter 6), as upstream's Run:
 * - the controllers, their informers included, start only once this candidate leads: a
 *   follower holds no caches (unlike kube-scheduler, whose informers start before the election);
 * - `/healthz` includes the elector's check (HealthzAdaptor, 20 s past the lease);
 * - leadership lost → `E "leaderelection lost"` and exit 1 at once, as klog.FlushAndExit;
 * - `LeaderElection` Events on the Lease ("<identity> became leader"), as upstream's recorder;
 * - SIGTERM → the controllers stop and the command exits 0, *without* releasing the Lease:
 *   upstream's kube-controller-manager does not set ReleaseOnCancel (kubernetes#132599 is
 *   open), so a follower waits out the lease even after a clean stop;
 * - `--leader-elect=false` starts the controllers at once, as before chapter 6.
 *
 * What upstream does differently: it serves metrics and a ping check per controller beside
 * /healthz, runs ~40 controllers, and in 1.32 does not even catch SIGTERM (Run gets
 * context.Background()): the process dies at once. We stop the controllers cleanly and exit 0
 * — and still keep the Lease, so the handover time is upstream's.
 *
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (NewControllerManagerCommand, Run, StartControllers, leaderElectAndRun)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/options.go (KubeControllerManagerOptions, Flags, Validate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/options/generic.go (--controllers, --kube-api-qps, --kube-api-burst, --master, --kubeconfig)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/namespacecontroller.go (--concurrent-namespace-syncs, --namespace-sync-period)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/endpointcontroller.go (--concurrent-endpoint-syncs, --endpoint-updates-batch-period)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/endpointslicecontroller.go (--concurrent-service-endpoint-syncs, --max-endpoints-per-slice, --endpointslice-updates-batch-period)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (--node-monitor-grace-period, --node-startup-grace-period, --node-eviction-rate, --secondary-node-eviction-rate, --large-cluster-size-threshold, --unhealthy-zone-threshold)
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/config/v1alpha1/defaults.go (NodeMonitorGracePeriod 50s since kubernetes#126287, NodeStartupGracePeriod 60s)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cloud-provider/options/kubecloudshared.go (--node-monitor-period, default 5s)
 * @chapter 04-informers
 */

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { newSecureServer, servingCertKey } from "../apiserver/serving.ts";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import type { Config } from "../client/rest/config.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { dynamicControllerClientBuilder } from "../controllers/client-builder.ts";
import {
  type ControllerManagerConfig,
  knownControllers,
  type RunningControllerManager,
  resolveControllers,
  startControllerManager,
} from "../controllers/controller-manager.ts";
import {
  defaultLeaderElectionConfiguration,
  type LeaderElectionConfiguration,
} from "../leaderelection/config.ts";
import { newLeaderElectorFromConfiguration } from "../leaderelection/from-configuration.ts";
import { newLeaderHealthzAdaptor } from "../leaderelection/healthz-adaptor.ts";
import type { TracingConfiguration } from "../tracing/config.ts";
import { newProvider } from "../tracing/provider.ts";
import {
  boolFlag,
  durationFlag,
  type Flag,
  FlagError,
  FlagValueError,
  intFlag,
  listFlag,
  stringFlag,
} from "./cli/flag.ts";
import { type HealthChecker, handleHealth } from "./cli/healthz.ts";
import {
  applyLeaderElectionFlags,
  leaderElectionFlags,
  leaderElectionIdentity,
  leaderElectionProblem,
} from "./cli/leader-election-flags.ts";
import { flushLeaseEvents, newLeaseEventRecorder } from "./cli/lease-events.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";
import { readTracingConfigFlag, tracingConfigFileFlag } from "./cli/tracing-flags.ts";

const positive = { min: 1, hint: "use a positive integer" };
const positiveDuration = { min: 1, hint: "use a positive duration, e.g. 5s" };

/** pflag's Float32Var: a decimal number (`0.1`, `1e-2`); negative refused here for the rates. */
function float32Flag(help: string, defaultValue: number): Flag<number> {
  return {
    help,
    default: defaultValue,
    set(text) {
      const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
      return Number.isFinite(n) && n >= 0 ? n : new FlagValueError("use a number, e.g. 0.1");
    },
    shownDefault: String(defaultValue),
  };
}

// #region flags
const flags = {
  // chapter 8: tracing — a COURSE FLAG here: upstream 1.32's kube-controller-manager has no tracing.
  "tracing-config-file": tracingConfigFileFlag(true),
  kubeconfig: stringFlag("Path to kubeconfig file with authorization and master location information"),
  master: stringFlag("The address of the Kubernetes API server (overrides any value in kubeconfig)"),
  controllers: listFlag(
    `A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'. All controllers: ${knownControllers().join(", ")}`,
    ["*"],
    "append", // a StringSlice: a repeated --controllers adds to the list
  ),
  "concurrent-replicaset-syncs": intFlag(
    "The number of replica sets that are allowed to sync concurrently",
    5,
    positive,
  ),
  "concurrent-deployment-syncs": intFlag(
    "The number of deployment objects that are allowed to sync concurrently",
    5,
    positive,
  ),
  "concurrent-gc-syncs": intFlag(
    "The number of garbage collector workers that are allowed to sync concurrently",
    20,
    positive,
  ),
  "concurrent-namespace-syncs": intFlag(
    "The number of namespace objects that are allowed to sync concurrently",
    10,
    positive,
  ),
  "concurrent-serviceaccount-token-syncs": intFlag(
    "The number of service account token objects that are allowed to sync concurrently",
    5,
    positive,
  ),
  // resource quota controller (options/resourcequotacontroller.go)
  "concurrent-resource-quota-syncs": intFlag(
    "The number of resource quotas that are allowed to sync concurrently. Larger number = more responsive quota management, but more CPU (and network) load",
    5,
    positive,
  ),
  "resource-quota-sync-period": durationFlag(
    "The period for syncing quota usage status in the system",
    5 * 60_000,
    { min: 1, hint: "use a positive duration, e.g. 5m0s" },
  ),
  // chapter 7: the Endpoints controller (options/endpointcontroller.go)
  "concurrent-endpoint-syncs": intFlag(
    "The number of endpoint syncing operations that will be done concurrently. Larger number = faster endpoint updating, but more CPU (and network) load",
    5,
    positive,
  ),
  "endpoint-updates-batch-period": durationFlag(
    "The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated",
    0,
    { min: 0, hint: "use a duration, e.g. 1s" },
  ),
  // the EndpointSlice controller (options/endpointslicecontroller.go)
  "concurrent-service-endpoint-syncs": intFlag(
    "The number of service endpoint syncing operations that will be done concurrently. Larger number = faster endpoint slice updating, but more CPU (and network) load. Defaults to 5.",
    5,
    positive,
  ),
  "max-endpoints-per-slice": intFlag(
    "The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.",
    100,
    positive,
  ),
  "endpointslice-updates-batch-period": durationFlag(
    "The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated",
    0,
    { min: 0, hint: "use a duration, e.g. 1s" },
  ),
  // chapter 7: the node lifecycle controller (options/nodelifecyclecontroller.go; --node-monitor-period
  // from staging/src/k8s.io/cloud-provider/options/kubecloudshared.go)
  "node-monitor-period": durationFlag(
    "The period for syncing NodeStatus in NodeController.",
    5_000,
    positiveDuration,
  ),
  "node-monitor-grace-period": durationFlag(
    "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status.",
    50_000,
    positiveDuration,
  ),
  "node-startup-grace-period": durationFlag(
    "Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.",
    60_000,
    positiveDuration,
  ),
  "node-eviction-rate": float32Flag(
    "Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.",
    0.1,
  ),
  "secondary-node-eviction-rate": float32Flag(
    "Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.",
    0.01,
  ),
  "large-cluster-size-threshold": intFlag(
    "Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller.",
    50,
    { min: 0, hint: "use a non-negative integer" },
  ),
  "unhealthy-zone-threshold": float32Flag(
    "Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy. ",
    0.55,
  ),
  "kube-api-qps": intFlag("QPS to use while talking with kubernetes apiserver", 20, positive),
  "kube-api-burst": intFlag("Burst to use while talking with kubernetes apiserver", 30, positive),
  "use-service-account-credentials": boolFlag(
    "If true, use individual service account credentials for each controller",
  ),
  // chapter 6: --leader-elect and the six that tune it, shared with kube-scheduler; and where /healthz is served.
  ...leaderElectionFlags(defaultLeaderElectionConfiguration("kube-controller-manager")),
  "secure-port": intFlag(
    "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.",
    10257,
    { min: 0, max: 65535, hint: "use a port number, 0 to disable serving" },
  ),
  "bind-address": stringFlag("The IP address on which to listen for the --secure-port port.", "0.0.0.0"),
};
// #endregion flags

interface ControllerManagerOptions {
  rest: Config;
  controllers: string[];
  config: Partial<ControllerManagerConfig>;
  useServiceAccountCredentials: boolean;
  leaderElect: boolean;
  /** chapter 6 */
  leaderElection: LeaderElectionConfiguration;
  securePort: number;
  bindAddress: string;
  /** chapter 8: tracing (course flag). */
  tracing?: TracingConfiguration;
}

// #region wiring
const kubeControllerManager = command({
  name: "kube-controller-manager",
  about: "the course's controller-manager: many control loops in one process",
  syntax: "pflag",
  flags,
  options(f, given): ControllerManagerOptions | FlagError {
    const controllers = resolveControllers(f.controllers);
    if (controllers instanceof Error)
      return new FlagError("kube-controller-manager", `--controllers: ${controllers.message}`);
    if (!f.kubeconfig && !f.master)
      return new FlagError(
        "kube-controller-manager",
        "--kubeconfig is required (or --master): e.g. --kubeconfig=pki/kube-controller-manager.kubeconfig",
      );
    const leaderElection = applyLeaderElectionFlags(
      f,
      given,
      defaultLeaderElectionConfiguration("kube-controller-manager"),
    );
    const electionProblem = leaderElectionProblem(leaderElection);
    if (electionProblem) return new FlagError("kube-controller-manager", electionProblem);
    let rest: Config;
    try {
      rest = buildConfigFromFlags(f.master ?? "", f.kubeconfig ?? "", {});
    } catch (e) {
      return new FlagError("kube-controller-manager", `invalid configuration: ${(e as Error).message}`);
    }
    const tracing = readTracingConfigFlag("kube-controller-manager", f["tracing-config-file"]);
    if (tracing instanceof FlagError) return tracing;
    return {
      tracing,
      rest: { ...rest, qps: f["kube-api-qps"], burst: f["kube-api-burst"] },
      controllers,
      config: {
        concurrentReplicaSetSyncs: f["concurrent-replicaset-syncs"],
        concurrentDeploymentSyncs: f["concurrent-deployment-syncs"],
        concurrentGCSyncs: f["concurrent-gc-syncs"],
        concurrentNamespaceSyncs: f["concurrent-namespace-syncs"],
        concurrentServiceAccountTokenSyncs: f["concurrent-serviceaccount-token-syncs"],
        concurrentResourceQuotaSyncs: f["concurrent-resource-quota-syncs"],
        resourceQuotaSyncPeriodMs: f["resource-quota-sync-period"],
        concurrentEndpointSyncs: f["concurrent-endpoint-syncs"],
        endpointUpdatesBatchPeriodMs: f["endpoint-updates-batch-period"],
        concurrentServiceEndpointSyncs: f["concurrent-service-endpoint-syncs"],
        maxEndpointsPerSlice: f["max-endpoints-per-slice"],
        endpointSliceUpdatesBatchPeriodMs: f["endpointslice-updates-batch-period"],
        nodeMonitorPeriodMs: f["node-monitor-period"],
        nodeMonitorGracePeriodMs: f["node-monitor-grace-period"],
        nodeStartupGracePeriodMs: f["node-startup-grace-period"],
        nodeEvictionRate: f["node-eviction-rate"],
        secondaryNodeEvictionRate: f["secondary-node-eviction-rate"],
        largeClusterSizeThreshold: f["large-cluster-size-threshold"],
        unhealthyZoneThreshold: f["unhealthy-zone-threshold"],
      },
      useServiceAccountCredentials: f["use-service-account-credentials"],
      leaderElect: leaderElection.leaderElect,
      leaderElection,
      securePort: f["secure-port"],
      bindAddress: f["bind-address"],
    };
  },
  async start(opts, io) {
    const log = (line: string) => io.stderr(`${line}\n`);
    const client = newForConfig(opts.rest);
    const tracerProvider = newProvider(opts.tracing, "kube-controller-manager"); // chapter 8
    const le = opts.leaderElection;
    const watchDog = le.leaderElect ? newLeaderHealthzAdaptor(20_000) : undefined;
    let server: Server | undefined;
    if (opts.securePort !== 0) {
      try {
        server = await serveHealthz(opts.bindAddress, opts.securePort, watchDog ? [watchDog] : []);
      } catch (e) {
        io.stderr(
          `kube-controller-manager: failed to listen on ${opts.bindAddress}:${opts.securePort}: ${(e as Error).message}\n`,
        );
        client.closeIdleConnections();
        return undefined;
      }
      const addr = server.address() as AddressInfo;
      log(`Serving securely on ${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`);
    }
    const closeServer = async () => {
      if (!server) return;
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    };
    const startManager = () =>
      startControllerManager({
        client,
        clientFor: opts.useServiceAccountCredentials
          ? dynamicControllerClientBuilder(client, opts.rest)
          : undefined,
        controllers: opts.controllers,
        config: opts.config,
        log,
        tracerProvider, // chapter 8
      });
    const started = (m: RunningControllerManager) =>
      `Started ${m.started.length} controller(s): ${m.started.join(", ")} (API server ${opts.rest.host})`;

    if (!le.leaderElect || !watchDog) {
      // No leader election: run directly, as before chapter 6.
      let manager: RunningControllerManager;
      try {
        manager = await startManager();
      } catch (e) {
        io.stderr(`kube-controller-manager: failed to start controllers: ${(e as Error).message}\n`);
        await closeServer();
        client.closeIdleConnections();
        return undefined;
      }
      return {
        ready: started(manager),
        async stop(signal) {
          log(`Received ${signal}; shutting down`);
          await manager.stop();
          await closeServer();
          await tracerProvider.shutdown().catch(() => {}); // chapter 8: the last spans
        },
      };
    }

    // #region leader-election
    const identity = leaderElectionIdentity();
    const election = new AbortController();
    let stopping = false;
    /** The controllers, once this candidate leads (StartControllers runs in OnStartedLeading). */
    let starting: Promise<RunningControllerManager | undefined> | undefined;
    // Upstream's Config: one recorder as "kube-controller-manager", given to the lock too, so the
    // election leaves core/v1 Events on the Lease (`kubectl describe lease`).
    const leaseEvents = newLeaseEventRecorder(client, "kube-controller-manager");
    const elector = newLeaderElectorFromConfiguration(
      le,
      opts.rest,
      identity,
      {
        watchDog,
        name: le.resourceName,
        // Upstream's leaderElectAndRun leaves ReleaseOnCancel false: a clean stop keeps the Lease.
        releaseOnCancel: false,
        log: (line) => log(`I "${line}"`),
        callbacks: {
          onStartedLeading: () => {
            starting = startManager().then(
              (m) => {
                log(started(m));
                return m;
              },
              (e: Error) => {
                log(`E "Error starting controllers" err="${e.message}"`);
                exitProcess(1);
                return undefined;
              },
            );
          },
          onStoppedLeading: () => {
            if (stopping) return;
            log(`E "leaderelection lost"`);
            exitProcess(1);
          },
          onNewLeader: (holder) => log(`I "New leader elected" identity="${holder}"`),
        },
      },
      leaseEvents,
    );
    log(
      `I "Leader election candidate" identity="${identity}" lease="${le.resourceNamespace}/${le.resourceName}"`,
    );
    const elected = elector.run(election.signal);
    // #endregion leader-election
    return {
      ready: `Waiting to lead (lease ${le.resourceNamespace}/${le.resourceName}) before starting controllers (API server ${opts.rest.host})`,
      async stop(signal) {
        stopping = true;
        log(`Received ${signal}; shutting down`);
        election.abort();
        await elected;
        await flushLeaseEvents(leaseEvents);
        const manager = await starting;
        await manager?.stop();
        await closeServer();
        client.closeIdleConnections();
        await tracerProvider.shutdown().catch(() => {}); // chapter 8: the last spans
      },
    };
  },
});
// #endregion wiring

// #region serving
/** /healthz over HTTPS with a self-signed certificate (upstream: NewBaseHandler on --secure-port). */
async function serveHealthz(bindAddress: string, port: number, checks: HealthChecker[]): Promise<Server> {
  const cert = await servingCertKey({ bindAddress });
  const server = newSecureServer(cert, undefined, (req, res) => {
    const answer = handleHealth(req.url ?? "/", { "/healthz": checks }) ?? {
      status: 404,
      body: "404 page not found",
    };
    res.writeHead(answer.status, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(answer.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, bindAddress, () => resolve());
  });
  return server;
}

/** klog.FlushAndExit: our stderr is a pipe or a file, written synchronously, so nothing is lost. */
const exitProcess = (code: number): never => process.exit(code);
// #endregion serving

/** Reads kube-controller-manager's flags from argv (without the program name). */
export const parseControllerManagerFlags = (argv: string[]) => parseCommand(kubeControllerManager, argv);

/** Runs the controller-manager until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(kubeControllerManager, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
