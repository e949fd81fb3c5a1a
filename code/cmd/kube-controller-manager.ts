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
 * - `--kube-api-qps` 20, `--kube-api-burst` 30: one token bucket for the whole process;
 * - `--use-service-account-credentials` (default false): each controller as its own
 *   ServiceAccount in kube-system (code/controllers/client-builder.ts);
 * - `--leader-elect` (default true, as upstream): accepted; leader election is built in chapter 6,
 *   so until then the manager says on start, in one line, that it runs without it.
 *
 * What upstream does differently: it serves /healthz and metrics on `--secure-port` 10257, runs
 * ~40 controllers, and with `--leader-elect` waits for a Lease before starting any of them.
 *
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (NewControllerManagerCommand, Run, StartControllers)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/options.go (KubeControllerManagerOptions, Flags, Validate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/options/generic.go (--controllers, --kube-api-qps, --kube-api-burst, --master, --kubeconfig)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/namespacecontroller.go (--concurrent-namespace-syncs, --namespace-sync-period)
 * @chapter 04-informers
 */
import { newForConfig } from "../client/kubernetes/clientset.ts";
import type { Config } from "../client/rest/config.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { dynamicControllerClientBuilder } from "../controllers/client-builder.ts";
import {
  type ControllerManagerConfig,
  knownControllers,
  resolveControllers,
  startControllerManager,
} from "../controllers/controller-manager.ts";
import { boolFlag, durationFlag, FlagError, intFlag, listFlag, stringFlag } from "./cli/flag.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";

const positive = { min: 1, hint: "use a positive integer" };

// #region flags
const flags = {
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
  "kube-api-qps": intFlag("QPS to use while talking with kubernetes apiserver", 20, positive),
  "kube-api-burst": intFlag("Burst to use while talking with kubernetes apiserver", 30, positive),
  "use-service-account-credentials": boolFlag(
    "If true, use individual service account credentials for each controller",
  ),
  "leader-elect": boolFlag(
    "Start a leader election client and gain leadership before executing the main loop (accepted; built in chapter 6)",
    true,
  ),
};
// #endregion flags

interface ControllerManagerOptions {
  rest: Config;
  controllers: string[];
  config: Partial<ControllerManagerConfig>;
  useServiceAccountCredentials: boolean;
  leaderElect: boolean;
}

// #region wiring
const kubeControllerManager = command({
  name: "kube-controller-manager",
  about: "the course's controller-manager: many control loops in one process",
  syntax: "pflag",
  flags,
  options(f): ControllerManagerOptions | FlagError {
    const controllers = resolveControllers(f.controllers);
    if (controllers instanceof Error)
      return new FlagError("kube-controller-manager", `--controllers: ${controllers.message}`);
    if (!f.kubeconfig && !f.master)
      return new FlagError(
        "kube-controller-manager",
        "--kubeconfig is required (or --master): e.g. --kubeconfig=pki/kube-controller-manager.kubeconfig",
      );
    let rest: Config;
    try {
      rest = buildConfigFromFlags(f.master ?? "", f.kubeconfig ?? "", {});
    } catch (e) {
      return new FlagError("kube-controller-manager", `invalid configuration: ${(e as Error).message}`);
    }
    return {
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
      },
      useServiceAccountCredentials: f["use-service-account-credentials"],
      leaderElect: f["leader-elect"],
    };
  },
  async start(opts, io) {
    const log = (line: string) => io.stderr(`${line}\n`);
    if (opts.leaderElect)
      log("--leader-elect=true: leader election arrives in chapter 6; running without leader election");
    const client = newForConfig(opts.rest);
    let manager: Awaited<ReturnType<typeof startControllerManager>>;
    try {
      manager = await startControllerManager({
        client,
        clientFor: opts.useServiceAccountCredentials
          ? dynamicControllerClientBuilder(client, opts.rest)
          : undefined,
        controllers: opts.controllers,
        config: opts.config,
        log,
      });
    } catch (e) {
      io.stderr(`kube-controller-manager: failed to start controllers: ${(e as Error).message}\n`);
      client.closeIdleConnections();
      return undefined;
    }
    return {
      ready: `Started ${manager.started.length} controller(s): ${manager.started.join(", ")} (API server ${opts.rest.host})`,
      async stop(signal) {
        log(`Received ${signal}; shutting down`);
        await manager.stop();
      },
    };
  },
});
// #endregion wiring

/** Reads kube-controller-manager's flags from argv (without the program name). */
export const parseControllerManagerFlags = (argv: string[]) => parseCommand(kubeControllerManager, argv);

/** Runs the controller-manager until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(kubeControllerManager, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
