/**
 * kube-scheduler — the command: connect to the API server with `--kubeconfig`, build the
 * scheduler from its configuration (`--config`, or the default profile), serve health and
 * metrics, schedule until SIGTERM or SIGINT. Upstream: NewSchedulerCommand in
 * cmd/kube-scheduler/app/server.go.
 *
 * Solves:
 * - a learner starts it as the real one (`kube-scheduler
 *   --kubeconfig=pki/kube-scheduler.kubeconfig`) and sees pods go from Pending to bound;
 * - an operator's probes (`/healthz`, `/livez`, `/readyz`) and Prometheus (`/metrics`) find it
 *   where they find upstream's, on `--secure-port` 10259 over HTTPS;
 * - a bad flag or configuration is one line before anything starts (exit 2, cli/run.ts);
 * - SIGTERM lets the current cycle and the bindings in flight finish, then exits 0.
 *
 * Flags, named and defaulted as upstream's in 1.32 (options/*.go):
 * - `--kubeconfig` (required unless `--master`, or the config's clientConnection.kubeconfig),
 *   `--master` (overrides the kubeconfig's server);
 * - `--config`: a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1);
 * - `--kube-api-qps` 50, `--kube-api-burst` 100 — a config file's clientConnection wins, as
 *   upstream (the deprecated flags only apply without `--config`);
 * - `--secure-port` 10259 (0: no serving), `--bind-address` 0.0.0.0: HTTPS with a self-signed
 *   certificate made in memory, as upstream does without `--tls-cert-file`;
 * - chapter 6: the seven `--leader-elect*` flags (cli/leader-election-flags.ts; default: elect,
 *   15s/10s/2s, Lease kube-system/kube-scheduler). A flag given on the command line overrides
 *   the `--config` file's `leaderElection` block; one left at its default does not (upstream's
 *   ApplyLeaderElectionTo).
 *
 * - chapter 8: `--tracing-config-file` — a COURSE FLAG (upstream 1.32's kube-scheduler has no
 *   tracing): the API server's TracingConfiguration file; each attempt is a `scheduleOne` span
 *   (its extension points as events) and each binding a `bindingCycle` span, the parent of the
 *   API server's binding request.
 * - chapter 8: `newSchedulerCommand(withPlugin(name, factory))` builds the same command with
 *   out-of-tree plugins, as upstream's app.NewSchedulerCommand(app.WithPlugin(…)) — the seam a
 *   scheduler of one's own (kubernetes-sigs/scheduler-plugins) is built on.
 *
 * Leader election (chapter 6), as upstream's Run:
 * - the informers start and sync before the election, so a follower's caches are warm when it
 *   takes over and its /readyz is green; only the leader runs scheduling cycles;
 * - `/healthz` and `/readyz` include the elector's check (HealthzAdaptor, 20 s past the lease);
 *   `/metrics` has `leader_election_master_status{name="kube-scheduler"}` (1 while leading);
 * - leadership lost → `E "Leaderelection lost"` and exit 1 at once, as klog.FlushAndExit: a
 *   process that may be a stale leader must not bind one more pod;
 * - SIGTERM → the loop stops, the bindings in flight finish, the Lease is released
 *   (ReleaseOnCancel is true in kube-scheduler) so a follower takes over at its next retry, exit 0;
 * - `LeaderElection` Events on the Lease ("<identity> became leader", "… stopped leading"),
 *   from the first profile's scheduler name, as upstream's Config wires its legacy recorder;
 * - `--leader-elect=false` schedules at once, as before chapter 6.
 *
 * What upstream does differently: /metrics and the health paths are behind delegated
 * authentication and authorization (TokenReview, SubjectAccessReview; the health paths are
 * always allowed); here every path is open. It also serves /configz and /debug/pprof. On
 * SIGTERM it releases the Lease as soon as the signal cancels its context, while a binding may
 * still be in flight; we release only after the loop and the bindings have finished. We also log
 * the identity, which upstream only shows in the `LeaderElection` events on the Lease.
 *
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/server.go (NewSchedulerCommand, runCommand, Run, Setup, newHealthEndpointsAndMetricsHandler, Option, WithPlugin)
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/options.go (Options, Flags, ApplyTo, Config, createClients: client and eventClient)
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/deprecated.go (--kube-api-qps, --kube-api-burst)
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/options.go (ApplyLeaderElectionTo, makeLeaderElectionConfig)
 * @chapter 05-scheduler
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { versionInfo } from "../apiserver/discovery.ts";
import { newSecureServer, servingCertKey } from "../apiserver/serving.ts";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import type { Config } from "../client/rest/config.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import {
  defaultLeaderElectionConfiguration,
  type LeaderElectionConfiguration,
} from "../leaderelection/config.ts";
import { newLeaderElectorFromConfiguration } from "../leaderelection/from-configuration.ts";
import { newLeaderHealthzAdaptor } from "../leaderelection/healthz-adaptor.ts";
import { leaderElectionMetrics } from "../leaderelection/metrics.ts";
import {
  ConfigLoadError,
  defaultConfiguration,
  type KubeSchedulerConfiguration,
  loadConfigFromFile,
} from "../scheduler/apis/config/load.ts";
import { validateKubeSchedulerConfiguration } from "../scheduler/apis/config/validation.ts";
import type { PluginFactory, Registry } from "../scheduler/framework/runtime/registry.ts";
import { type KubeScheduler, newScheduler, type SchedulerConfiguration } from "../scheduler/scheduler.ts";
import type { TracingConfiguration } from "../tracing/config.ts";
import { newProvider } from "../tracing/provider.ts";
import { boolFlag, FlagError, intFlag, stringFlag } from "./cli/flag.ts";
import { type HealthChecker, handleHealth, namedCheck } from "./cli/healthz.ts";
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

// #region flags
const flags = {
  kubeconfig: stringFlag("Path to kubeconfig file with authorization and master location information"),
  master: stringFlag("The address of the Kubernetes API server (overrides any value in kubeconfig)"),
  config: stringFlag("The path to the configuration file."),
  "kube-api-qps": intFlag(
    "DEPRECATED: QPS to use while talking with kubernetes apiserver. This parameter is ignored if a config file is specified in --config.",
    50,
    positive,
  ),
  "kube-api-burst": intFlag(
    "DEPRECATED: burst to use while talking with kubernetes apiserver. This parameter is ignored if a config file is specified in --config.",
    100,
    positive,
  ),
  "secure-port": intFlag(
    "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.",
    10259,
    { min: 0, max: 65535, hint: "use a port number, 0 to disable serving" },
  ),
  "bind-address": stringFlag("The IP address on which to listen for the --secure-port port.", "0.0.0.0"),
  // chapter 6: --leader-elect and the six that tune it, shared with kube-controller-manager.
  ...leaderElectionFlags(defaultLeaderElectionConfiguration("kube-scheduler")),
  // chapter 8: tracing — a COURSE FLAG here: upstream 1.32's kube-scheduler has no tracing.
  "tracing-config-file": tracingConfigFileFlag(true),
  // A course addition (upstream has no such flag): what kube-scheduler-simulator records.
  explain: boolFlag(
    "Record every node's Filter result and every plugin's score on the pod, as kube-scheduler-simulator's annotations",
    false,
  ),
};
// #endregion flags

interface SchedulerCommandOptions {
  rest: Config;
  config: SchedulerConfiguration;
  securePort: number;
  bindAddress: string;
  leaderElect: boolean;
  /** chapter 6: the merged leaderElection block (file, then the flags given). */
  leaderElection: LeaderElectionConfiguration;
  explain: boolean;
  /** chapter 8: tracing (course flag). */
  tracing?: TracingConfiguration;
  /** chapter 8: plugins of an out-of-tree build (newSchedulerCommand(withPlugin(…))). */
  outOfTreeRegistry?: Registry;
}

// #region wiring
const kubeScheduler = command({
  name: "kube-scheduler",
  about: "the course's scheduler: places each pending pod on a node",
  syntax: "pflag",
  flags,
  options(f, given): SchedulerCommandOptions | FlagError {
    // No --config: the defaulted empty configuration, as upstream's Options.Config.
    let loaded: KubeSchedulerConfiguration = defaultConfiguration();
    if (f.config) {
      try {
        loaded = loadConfigFromFile(f.config);
        // #region leader-election-flags
        // ApplyLeaderElectionTo, then validation: the flags given win over the file's block.
        loaded = { ...loaded, leaderElection: applyLeaderElectionFlags(f, given, loaded.leaderElection) };
        // #endregion leader-election-flags
        validateKubeSchedulerConfiguration(loaded);
      } catch (e) {
        const msg = e instanceof ConfigLoadError ? e.line() : (e as Error).message;
        return new FlagError("kube-scheduler", `--config ${f.config}: ${msg}`);
      }
    } else {
      loaded = { ...loaded, leaderElection: applyLeaderElectionFlags(f, given, loaded.leaderElection) };
    }
    const electionProblem = leaderElectionProblem(loaded.leaderElection);
    if (electionProblem) return new FlagError("kube-scheduler", electionProblem);
    const kubeconfig = f.kubeconfig || loaded.clientConnection.kubeconfig;
    if (!kubeconfig && !f.master)
      return new FlagError(
        "kube-scheduler",
        "--kubeconfig is required (or --master): e.g. --kubeconfig=pki/kube-scheduler.kubeconfig",
      );
    let rest: Config;
    try {
      rest = buildConfigFromFlags(f.master ?? "", kubeconfig, {});
    } catch (e) {
      return new FlagError("kube-scheduler", `invalid configuration: ${(e as Error).message}`);
    }
    // With --config the file's clientConnection decides; the deprecated flags apply only without.
    const qps = f.config ? loaded.clientConnection.qps : f["kube-api-qps"];
    const burst = f.config ? loaded.clientConnection.burst : f["kube-api-burst"];
    const config: SchedulerConfiguration = loaded;
    const tracing = readTracingConfigFlag("kube-scheduler", f["tracing-config-file"]);
    if (tracing instanceof FlagError) return tracing;
    return {
      tracing,
      rest: { ...rest, qps, burst, userAgent: rest.userAgent ?? "kube-scheduler" },
      config,
      securePort: f["secure-port"],
      bindAddress: f["bind-address"],
      leaderElect: loaded.leaderElection.leaderElect,
      leaderElection: loaded.leaderElection,
      explain: f.explain,
    };
  },
  async start(opts, io) {
    const log = (line: string) => io.stderr(`${line}\n`);
    log(`"Starting Kubernetes Scheduler" version="${versionInfo.gitVersion}"`);
    const client = newForConfig(opts.rest);
    // Events get a clientset of their own, as upstream's createClients: its own rate limiter, so
    // a burst of Scheduled/FailedScheduling events never waits in line with the bindings.
    const eventClient = newForConfig(opts.rest);
    const closeClients = () => {
      client.closeIdleConnections();
      eventClient.closeIdleConnections();
    };
    const tracerProvider = newProvider(opts.tracing, "kube-scheduler"); // chapter 8
    let scheduler: KubeScheduler;
    try {
      scheduler = newScheduler({
        client,
        eventClient,
        tracerProvider,
        config: opts.config,
        explain: opts.explain,
        outOfTreeRegistry: opts.outOfTreeRegistry,
        log,
        onError: (e) => log(`E "${e.message}"`),
      });
    } catch (e) {
      io.stderr(`kube-scheduler: couldn't create scheduler: ${(e as Error).message}\n`);
      closeClients();
      return undefined;
    }
    const le = opts.leaderElection;
    // The watchdog exists before the server, so /healthz has its check from the first probe on.
    const watchDog = le.leaderElect ? newLeaderHealthzAdaptor(20_000) : undefined;
    let server: Server | undefined;
    if (opts.securePort !== 0) {
      try {
        server = await serveHealthAndMetrics(scheduler, opts.bindAddress, opts.securePort, watchDog);
      } catch (e) {
        io.stderr(
          `kube-scheduler: failed to listen on ${opts.bindAddress}:${opts.securePort}: ${(e as Error).message}\n`,
        );
        closeClients();
        return undefined;
      }
      const addr = server.address() as AddressInfo;
      log(`Serving securely on ${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`);
    }
    const closeServer = async () => {
      if (!server) return;
      const closed = new Promise<void>((r) => server.close(() => r()));
      // A probe's keep-alive connection would hold close() open.
      server.closeAllConnections();
      await closed;
    };
    let stopping = false;
    // Informers before the election (upstream's startInformersAndWaitForSync): warm followers.
    if (!(await scheduler.startInformersAndWaitForSync())) {
      io.stderr("kube-scheduler: the informers' caches did not sync\n");
      await scheduler.stop();
      await closeServer();
      return undefined;
    }
    const profiles = [...scheduler.profiles.keys()].join(", ");
    const loopEnded = (loop: Promise<void>) =>
      loop.then(
        () => {
          if (!stopping) log("kube-scheduler: the scheduling loop ended on its own");
          return stopping ? new Promise<void>(() => {}) : undefined;
        },
        (e: Error) => log(`kube-scheduler: ${e.message}`),
      );

    if (!le.leaderElect || !watchDog) {
      // Leader election is disabled: schedule at once, as before chapter 6.
      const failed = loopEnded(scheduler.run());
      return {
        ready: `"Caches are synced"; scheduling pods for profiles ${profiles} (API server ${opts.rest.host})`,
        failed,
        async stop(signal) {
          stopping = true;
          log(`Received ${signal}; shutting down`);
          await scheduler.stop();
          await closeServer();
          closeClients();
          await tracerProvider.shutdown().catch(() => {}); // chapter 8: the last spans
        },
      };
    }

    // #region leader-election
    const identity = leaderElectionIdentity();
    const election = new AbortController();
    let failed: (() => void) | undefined;
    const failedPromise = new Promise<void>((r) => {
      failed = r;
    });
    // Upstream's Config: the first profile's scheduler name records the election, as core/v1
    // Events on the Lease (a legacy recorder), so `kubectl describe lease` shows who led when.
    const leaseEvents = newLeaseEventRecorder(
      eventClient,
      [...scheduler.profiles.keys()][0] ?? "default-scheduler",
    );
    const elector = newLeaderElectorFromConfiguration(
      le,
      opts.rest,
      identity,
      {
        watchDog,
        name: "kube-scheduler",
        releaseOnCancel: true,
        // leader_election_master_status on /metrics, as upstream's (component-base's provider).
        metrics: leaderElectionMetrics(scheduler.metrics.registry),
        log: (line) => log(`I "${line}"`),
        callbacks: {
          onStartedLeading: (leading) => {
            // A lost lease stops new cycles at once; onStoppedLeading then exits the process.
            leading.addEventListener("abort", () => scheduler.queue.close(), { once: true });
            void loopEnded(scheduler.run()).then(() => failed?.());
          },
          onStoppedLeading: () => {
            if (stopping) {
              log(`I "Requested to terminate, exiting"`);
              return;
            }
            // We lost the lock: exit now, before this process can act on stale leadership.
            log(`E "Leaderelection lost"`);
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
      ready: `"Caches are synced"; waiting to lead (lease ${le.resourceNamespace}/${le.resourceName}) before scheduling pods for profiles ${profiles} (API server ${opts.rest.host})`,
      failed: failedPromise,
      async stop(signal) {
        stopping = true;
        log(`Received ${signal}; shutting down`);
        // The loop and the bindings in flight end first; only then is the Lease given up.
        await scheduler.stop();
        election.abort();
        await elected;
        // "stopped leading" reaches the Lease, unless the API server is away: 2 s at most, then dropped.
        await flushLeaseEvents(leaseEvents);
        await closeServer();
        closeClients();
        await tracerProvider.shutdown().catch(() => {}); // chapter 8: the last spans
      },
    };
  },
});
// #endregion wiring

// #region serving
/** /healthz, /livez, /readyz and /metrics over HTTPS with a self-signed certificate. */
async function serveHealthAndMetrics(
  s: KubeScheduler,
  bindAddress: string,
  port: number,
  watchDog?: HealthChecker,
): Promise<Server> {
  const cert = await servingCertKey({ bindAddress });
  // As upstream's Run: the elector's watchdog in /healthz and /readyz; /readyz also waits for
  // the informers' handlers (sched-handler-sync). /livez has no checks, so it pings.
  const election = watchDog ? [watchDog] : [];
  const handlerSync = namedCheck("sched-handler-sync", () =>
    s.ready() ? undefined : new Error("handlers are not fully synchronized"),
  );
  const health = { "/healthz": election, "/livez": [], "/readyz": [...election, handlerSync] };
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    const answer = handleHealth(url, health);
    if (answer) return reply(res, answer.status, answer.body);
    const path = url.split("?")[0];
    if (path === "/metrics") {
      const body = await s.metrics.text();
      res.writeHead(200, { "Content-Type": s.metrics.contentType() });
      return res.end(body);
    }
    reply(res, 404, "404 page not found");
  };
  const server = newSecureServer(cert, undefined, (req, res) => void handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, bindAddress, () => resolve());
  });
  return server;
}

function reply(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(text);
}

/** klog.FlushAndExit: our stderr is a pipe or a file, written synchronously, so nothing is lost. */
const exitProcess = (code: number): never => process.exit(code);
// #endregion serving

// #region out-of-tree
/** One change to the out-of-tree registry (upstream's app.Option); throws as upstream's returns an error. */
export type Option = (registry: Registry) => void;

/** WithPlugin: a plugin this build knows by `name`, as if it were in tree (upstream's app.WithPlugin). */
export function withPlugin(name: string, factory: PluginFactory): Option {
  return (registry) => {
    if (registry.has(name)) throw new Error(`a plugin named ${name} already exists`);
    registry.set(name, factory);
  };
}

/**
 * NewSchedulerCommand: kube-scheduler with out-of-tree plugins — how a scheduler of one's own is
 * built (kubernetes-sigs/scheduler-plugins' cmd/scheduler/main.go:
 * `app.NewSchedulerCommand(app.WithPlugin(name, New), …)`). Its configuration names the plugins
 * like the in-tree ones; a name already in tree is refused when the scheduler is built.
 */
export function newSchedulerCommand(...registryOptions: Option[]): typeof kubeScheduler {
  const outOfTreeRegistry: Registry = new Map();
  for (const option of registryOptions) option(outOfTreeRegistry);
  return {
    ...kubeScheduler,
    options(f, given) {
      const o = kubeScheduler.options(f, given);
      return o instanceof FlagError ? o : { ...o, outOfTreeRegistry };
    },
  };
}
// #endregion out-of-tree

/** Reads kube-scheduler's flags from argv (without the program name). */
export const parseSchedulerFlags = (argv: string[]) => parseCommand(kubeScheduler, argv);

/** Runs the scheduler until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(kubeScheduler, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
