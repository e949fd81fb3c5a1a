/**
 * kubemark — the command: hollow nodes, kubelets on the fake runtime that register, report
 * status, renew their Lease and "run" the pods bound to them with no process behind, so a
 * control plane can be measured at a thousand nodes on one machine. Upstream:
 * cmd/kubemark/hollow-node.go (NewHollowNodeCommand in cmd/kubemark/app/hollow_node.go, with
 * `--morph=kubelet`); ours hosts MANY hollow nodes in this one process (`--count`), where
 * upstream runs one hollow node per process (per pod of its kubemark cluster).
 *
 * Solves:
 * - `npm run cluster -- --fake-nodes 1000` and the cluster benchmark start one process:
 *   `kubemark --morph=kubelet --count=1000 --name-prefix=hollow-node- --kubeconfig-dir=pki
 *   --root-dir=kubemark`; it prints a progress line while the nodes start and register, and
 *   `hollow nodes started: 1000` once every one has registered its Node;
 * - each hollow node is a whole kubelet (startMainKubelet: sync loop, status manager, node status,
 *   node Lease, events) with its own client and its own identity (`node-<name>.kubeconfig`), so
 *   the API server sees what a thousand real kubelets would send it, authorized as each node;
 * - a thousand start in reasonable time: `--batch-size` of them are started together, the next
 *   batch when those have started (registering continues in the background);
 * - SIGTERM or SIGINT stops every hollow node (its loops, Lease, watches), also in the middle of
 *   starting, and exits 0; a bad flag is one line and exit 2 (cli/run.ts);
 * - chapter 8: `--tracing-config-file` (a COURSE FLAG) traces every hollow kubelet as a kubelet
 *   traces (service.name `kubelet`, host.name its node), all through one exporter and one batch
 *   processor (tracing/provider.ts's newSharedProviders), flushed after the last node stopped.
 *
 * Invariants:
 * - node i gets its own node IP and pod CIDR (`addresses`: 10.0.x.y and 10.<100+…>.x.0/24): no
 *   two hollow nodes share one, and none overlaps the process kubelets' 10.244.<n>.0/24;
 * - every image of the course's catalog is already present on a hollow node (preloaded), with
 *   the behaviour the fake-runtime kubelet gives it: no pod's start waits on a pull.
 *
 * What upstream does differently: a hollow kubelet runs upstream's whole kubelet with a fake
 * remote CRI runtime, a fake cAdvisor and a stub container manager, serves the kubelet port and
 * uses a second client without QPS limit for heartbeats; ours runs no kubelet server (no logs
 * or exec on a hollow node), and one client per node carries everything. The user agent is
 * upstream's, `hollow-kubelet`.
 *
 * @upstream kubernetes/kubernetes cmd/kubemark/hollow-node.go (main)
 * @upstream kubernetes/kubernetes cmd/kubemark/app/hollow_node.go (NewHollowNodeCommand, run: UserAgent "hollow-kubelet", GetHollowKubeletConfig, NewHollowKubelet)
 * @upstream kubernetes/kubernetes pkg/kubemark/hollow_kubelet.go (NewHollowKubelet, Run, GetHollowKubeletConfig)
 * @chapter 08-cluster
 */
import { mkdirSync } from "node:fs";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { realClock } from "../client/util/clock.ts";
import { type MainKubelet, startMainKubelet } from "../kubelet/main-kubelet.ts";
import { machineInfoFromCapacity } from "../kubelet/nodestatus/setters.ts";
import { FakeImageService } from "../kubelet/runtime/fake-image-service.ts";
import { FakeRuntimeService } from "../kubelet/runtime/fake-runtime-service.ts";
import { catalog } from "../kubelet/runtime/images/catalog.ts";
import { type ComponentTracerProvider, newSharedProviders } from "../tracing/provider.ts";
import type { FlagError } from "./cli/flag.ts";
import {
  type HollowNode,
  type KubemarkOptions,
  kubemarkFlags,
  kubemarkOptionsFromFlags,
} from "./cli/kubemark-flags.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";
import { fakeBehaviour } from "./kubelet.ts";

/** How often the progress line is written while hollow nodes start. */
const progressEveryMs = 2000;

/** Node i's addresses: a node IP and a pod CIDR of its own (upstream's kubemark: the pod's IP). */
export function addresses(i: number): { nodeIP: string; podCIDR: string } {
  return {
    nodeIP: `10.0.${Math.floor(i / 250)}.${(i % 250) + 2}`,
    podCIDR: `10.${100 + Math.floor(i / 250)}.${i % 250}.0/24`,
  };
}

// #region hollow-kubelet
/** One hollow node: a whole kubelet on the fake runtime, with the node's own client and identity. */
async function startHollowKubelet(
  o: KubemarkOptions,
  node: HollowNode,
  index: number,
  log: (line: string) => void,
  tracerProvider: ComponentTracerProvider,
): Promise<MainKubelet> {
  const images = new FakeImageService();
  for (const img of catalog)
    for (const tag of img.tags) images.preload(`${img.repository}:${tag}`, fakeBehaviour(img.repository));
  const rest = buildConfigFromFlags("", node.kubeconfig, {});
  // hollow_node.go: the user agent "hollow-kubelet", --kube-api-qps 10 and --kube-api-burst 20.
  const client = newForConfig({ ...rest, qps: o.qps, burst: o.burst, userAgent: "hollow-kubelet" });
  mkdirSync(node.rootDir, { recursive: true });
  const { nodeIP, podCIDR } = addresses(index);
  const main = await startMainKubelet({
    nodeName: node.name,
    hostname: node.name,
    client,
    runtime: {
      name: "fake",
      version: "0.1.0",
      runtimeService: new FakeRuntimeService(realClock, images),
      imageService: images,
    },
    rootDir: node.rootDir,
    clock: realClock,
    machine: machineInfoFromCapacity(node.name, o.capacity),
    nodeIP,
    podCIDR,
    nodeLabels: o.nodeLabels,
    tracerProvider, // chapter 8: host.name the node, as a kubelet's
    // A thousand kubelets' info lines would drown the log: errors only, with the node's name.
    log: (line) => {
      if (line.startsWith("E ")) log(`${line} node="${node.name}"`);
    },
  });
  return {
    ...main,
    async stop() {
      await main.stop();
      client.closeIdleConnections();
    },
  };
}
// #endregion hollow-kubelet

// #region wiring
const kubemark = command({
  name: "kubemark",
  about: "hollow nodes: many fake-runtime kubelets in one process",
  syntax: "pflag",
  flags: kubemarkFlags,
  options: (f, given): KubemarkOptions | FlagError => kubemarkOptionsFromFlags(f, given),
  async start(o, io) {
    const log = (line: string) => io.stderr(`${line}\n`);
    const total = o.nodes.length;
    log(`I "Starting hollow nodes" morph="${o.morph}" count=${total} batchSize=${o.batchSize}`);
    const started: MainKubelet[] = [];
    let stopping = false;
    let failure: (() => void) | undefined;
    const failed = new Promise<void>((r) => {
      failure = r;
    });
    const registered = () => started.filter((k) => k.nodeStatus.state.registrationCompleted).length;
    const t0 = performance.now();
    const progress = setInterval(
      () => log(`… hollow nodes: started ${started.length}/${total}, registered ${registered()}/${total}`),
      progressEveryMs,
    );
    // chapter 8: one exporter for every hollow kubelet; flushed after the last one stopped.
    const tracing = newSharedProviders(o.tracing, "kubelet");
    const stopAll = async () => {
      await Promise.all(started.splice(0).map((k) => k.stop().catch(() => {})));
      await tracing.shutdown().catch(() => {});
    };
    // Batches in the background: `run` hands us the signal even while nodes are still starting.
    const starting = (async () => {
      for (let i = 0; i < total && !stopping; i += o.batchSize) {
        const batch = o.nodes.slice(i, i + o.batchSize);
        const mains = await Promise.allSettled(
          batch.map((n, j) =>
            startHollowKubelet(o, n, i + j, log, tracing.forResource({ "host.name": n.name })),
          ),
        );
        for (const m of mains) if (m.status === "fulfilled") started.push(m.value);
        const bad = mains.find((m) => m.status === "rejected");
        if (bad) throw (bad as PromiseRejectedResult).reason;
      }
      while (!stopping && registered() < total) await new Promise((r) => setTimeout(r, 100));
      if (stopping) return;
      clearInterval(progress);
      log(`… hollow nodes: all ${total} registered in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      log(`hollow nodes started: ${total}`);
    })().catch(async (e: unknown) => {
      clearInterval(progress);
      log(`kubemark: a hollow node failed to start: ${e instanceof Error ? e.message : String(e)}`);
      await stopAll();
      failure?.();
    });
    return {
      failed,
      async stop(signal) {
        stopping = true;
        clearInterval(progress);
        await starting;
        log(`Received ${signal}; stopping ${started.length} hollow nodes`);
        await stopAll();
      },
    };
  },
});
// #endregion wiring

/** Reads kubemark's flags from argv (without the program name). */
export const parseKubemarkFlags = (argv: string[]) => parseCommand(kubemark, argv);

/** Runs the hollow nodes until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(kubemark, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
