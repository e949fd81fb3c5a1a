/**
 * kubelet — the command: register this node with the API server, run the pods bound to it as
 * real processes (or simulated ones), report their status and the node's, renew the node Lease,
 * serve logs and exec — until SIGTERM or SIGINT. Upstream: NewKubeletCommand in
 * cmd/kubelet/app/server.go.
 *
 * Solves:
 * - a learner starts it as the real one (`kubelet --kubeconfig=pki/node-node-1.kubeconfig
 *   --hostname-override=node-1`) and sees the node go Ready and pods start, then drives it with
 *   `kubectl logs` and `kubectl exec`;
 * - two kubelets on one machine do not collide: everything on disk is under `--root-dir`, every
 *   port is a flag, and each takes its own `--pod-cidr`;
 * - a bad flag is one line before anything starts (exit 2, cli/run.ts).
 *
 * Flags: upstream's names and defaults (cli/kubelet-flags.ts: `--kubeconfig`, `--hostname-override`,
 * `--root-dir`, `--config`, `--port`, `--address`, `--healthz-port`, `--pod-manifest-path`,
 * `--node-labels`, `--register-with-taints`, `--node-ip`, `--pod-cidr`, `--client-ca-file`, …),
 * plus the course's `--runtime=process|fake`, `--fake-capacity` and `--warm-pool`.
 *
 * Chapter 8, tracing: the `--config` file's `tracing: {endpoint, samplingRatePerMillion}` (no flag,
 * as upstream) turns on spans — `syncPod`, the CRI calls, the status writes — sent as OTLP/HTTP
 * with service.name `kubelet` and host.name the node (upstream: OTLP/gRPC; the KubeletTracing gate,
 * on by default since 1.28).
 *
 * Stopping: SIGTERM stops the loops, the node status and Lease, and the server, and leaves the
 * containers running — a kubelet restart must not restart its pods; the next kubelet over the same
 * `--root-dir` adopts them.
 *
 * What upstream does differently: the runtime is a separate daemon behind
 * `--container-runtime-endpoint` (containerd, CRI-O); ours lives in this process (the process
 * runtime's containers outlive it, as containerd's shims outlive containerd). Without
 * `--client-ca-file` the kubelet server trusts the CA of its kubeconfig (kubeadm sets both to the
 * cluster CA); upstream would accept any client certificate. The read-only port is not served.
 *
 * @upstream kubernetes/kubernetes cmd/kubelet/app/server.go (NewKubeletCommand, Run, RunKubelet)
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go (KubeAPIQPS 50, KubeAPIBurst 100)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (ListenAndServeHealthz… : the healthz port)
 * @upstream kubernetes/kubernetes cmd/kubelet/app/server.go (newTracerProvider: chapter 8's tracing, service.name kubelet, host.name)
 * @chapter 07-kubelet
 */

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import type { Config } from "../client/rest/config.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { realClock } from "../client/util/clock.ts";
import { type KubeletRuntime, type MainKubelet, startMainKubelet } from "../kubelet/main-kubelet.ts";
import {
  type MachineInfo,
  machineInfoFromCapacity,
  machineInfoFromHost,
} from "../kubelet/nodestatus/setters.ts";
import { FakeImageService } from "../kubelet/runtime/fake-image-service.ts";
import { FakeRuntimeService } from "../kubelet/runtime/fake-runtime-service.ts";
import { catalog } from "../kubelet/runtime/images/catalog.ts";
import { podRange } from "../kubelet/runtime/network/pod-network.ts";
import { ProcessImageService } from "../kubelet/runtime/process-image-service.ts";
import { ProcessRuntimeService } from "../kubelet/runtime/process-runtime-service.ts";
import { newProvider } from "../tracing/provider.ts";
import { FlagError } from "./cli/flag.ts";
import { handleHealth, namedCheck } from "./cli/healthz.ts";
import { type KubeletOptions, kubeletConfigurationFromFlags, kubeletFlags } from "./cli/kubelet-flags.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";

/** pkg/kubelet/apis/config/v1beta1/defaults.go: KubeAPIQPS, KubeAPIBurst. */
const KubeAPIQPS = 50;
const KubeAPIBurst = 100;

interface KubeletCommandOptions extends KubeletOptions {
  rest: Config;
  clientCA: string;
}

// #region wiring
const kubelet = command({
  name: "kubelet",
  about: "the course's node agent: runs the pods bound to this node",
  syntax: "pflag",
  flags: kubeletFlags,
  options(f, given): KubeletCommandOptions | FlagError {
    const o = kubeletConfigurationFromFlags(f, given as ReadonlySet<string>);
    if (o instanceof FlagError) return o;
    if (o.config.podCIDR) {
      try {
        podRange(o.config.podCIDR);
      } catch (e) {
        return new FlagError("kubelet", `--pod-cidr: ${(e as Error).message}`);
      }
    }
    if (!o.kubeconfig)
      return new FlagError(
        "kubelet",
        "--kubeconfig is required: this course's kubelet has no standalone mode (e.g. --kubeconfig=pki/node-node-1.kubeconfig)",
      );
    let rest: Config;
    try {
      rest = buildConfigFromFlags("", o.kubeconfig, {});
    } catch (e) {
      return new FlagError("kubelet", `invalid configuration: ${(e as Error).message}`);
    }
    let clientCA: string;
    const caFile = o.config.authentication.x509.clientCAFile;
    try {
      clientCA = caFile
        ? readFileSync(caFile, "utf8")
        : (rest.tlsClientConfig?.caData ??
          (rest.tlsClientConfig?.caFile ? readFileSync(rest.tlsClientConfig.caFile, "utf8") : ""));
    } catch (e) {
      return new FlagError("kubelet", `--client-ca-file: ${(e as Error).message}`);
    }
    if (!clientCA)
      return new FlagError(
        "kubelet",
        "--client-ca-file is required when the kubeconfig names no certificate authority (e.g. --client-ca-file=pki/ca.crt)",
      );
    return {
      ...o,
      // KubeletConfiguration's kubeAPIQPS 50 and kubeAPIBurst 100 (v1beta1 defaults.go): without
      // them the client's own default, 5/s, queues a burst of pods' events and status patches
      // for seconds (the kubelet benchmark's startup latency showed it). No flag or file field yet.
      rest: {
        ...rest,
        qps: rest.qps || KubeAPIQPS,
        burst: rest.burst || KubeAPIBurst,
        userAgent: rest.userAgent ?? `kubelet/v1.32.0 (${o.nodeName})`,
      },
      clientCA,
    };
  },
  async start(o, io) {
    const log = (line: string) => io.stderr(`${line}\n`);
    for (const w of o.warnings) log(w);
    const nodeIP = o.nodeIP ?? "127.0.0.1";
    const runtimeDir = join(o.rootDir, "runtime");
    const runtime = newRuntime(o, runtimeDir, nodeIP);
    log(`I "Starting kubelet" node="${o.nodeName}" runtime="${o.runtime}" rootDir="${o.rootDir}"`);
    const client = newForConfig(o.rest);
    const machine = await kubeletMachine(o);
    // chapter 8: KubeletConfiguration `tracing` — service.name "kubelet", host.name the node, as upstream.
    const tracerProvider = newProvider(o.config.tracing, "kubelet", { "host.name": o.nodeName });
    let main: MainKubelet;
    try {
      main = await startMainKubelet({
        tracerProvider,
        nodeName: o.nodeName,
        hostname: o.hostname,
        client,
        runtime,
        rootDir: o.rootDir,
        clock: realClock,
        machine,
        nodeIP,
        nodeLabels: o.nodeLabels,
        registerWithTaints: o.config.registerWithTaints,
        registerNode: o.config.registerNode,
        podCIDR: o.config.podCIDR || undefined,
        kubeReserved: o.kubeReserved,
        systemReserved: o.systemReserved,
        evictionHard: o.evictionHard,
        nodeStatus: o.nodeStatus,
        staticPodPath: o.config.staticPodPath,
        syncFrequencyMs: o.config.syncFrequencyMs,
        fileCheckFrequencyMs: o.config.fileCheckFrequencyMs,
        server: {
          address: o.config.address,
          port: o.config.port,
          clientCA: o.clientCA,
          tls:
            o.config.tlsCertFile && o.config.tlsPrivateKeyFile
              ? {
                  cert: readFileSync(o.config.tlsCertFile, "utf8"),
                  key: readFileSync(o.config.tlsPrivateKeyFile, "utf8"),
                }
              : undefined,
          certDir: o.certDir,
        },
        log: (line) => log(line.startsWith("E ") || line.startsWith("I ") ? line : `I ${line}`),
      });
    } catch (e) {
      io.stderr(`kubelet: ${(e as Error).message}\n`);
      runtime.close?.();
      client.closeIdleConnections();
      return undefined;
    }
    let healthz: Server | undefined;
    if (o.config.healthzPort !== 0) {
      healthz = await serveHealthz(o.config.healthzBindAddress, o.config.healthzPort, main).catch((e) => {
        log(`E "Failed to start healthz server" err="${(e as Error).message}"`);
        return undefined;
      });
    }
    if (o.config.readOnlyPort !== 0)
      log(`I "The read-only port is not served by this course's kubelet" port=${o.config.readOnlyPort}`);
    return {
      ready: `node ${o.nodeName}: watching pods with fieldSelector=spec.nodeName=${o.nodeName} (API server ${o.rest.host}; runtime ${o.runtime}; pod CIDR ${o.config.podCIDR || "10.244.0.0/24"})`,
      async stop(signal) {
        log(`Received ${signal}; shutting down (containers keep running)`);
        await main.stop();
        await tracerProvider.shutdown().catch(() => {}); // chapter 8: the last spans
        if (healthz) {
          const closed = new Promise<void>((r) => healthz?.close(() => r()));
          healthz.closeAllConnections();
          await closed;
        }
        client.closeIdleConnections();
      },
    };
  },
});
// #endregion wiring

// #region runtime
/**
 * The machine this kubelet reports: the host's (its cores, memory and root filesystem), or with
 * `--runtime=fake` a simulated one — the sizes `--fake-capacity` gives, this host's for the rest
 * (as the flag's help says: a node without ephemeral-storage would never be Ready), and an
 * identity (boot id) of its own, since many simulated machines share this host.
 */
export async function kubeletMachine(
  o: Pick<KubeletOptions, "runtime" | "nodeName" | "rootDir" | "fakeCapacity">,
): Promise<MachineInfo> {
  const host = await machineInfoFromHost(o.rootDir);
  if (o.runtime !== "fake") return host;
  const { numCores, memoryCapacity, rootfsCapacity } = host;
  return machineInfoFromCapacity(o.nodeName, o.fakeCapacity ?? {}, {
    numCores,
    memoryCapacity,
    rootfsCapacity,
  });
}

/** The CRI runtime `--runtime` names, over `<root-dir>/runtime`. */
function newRuntime(o: KubeletOptions, dir: string, nodeIP: string): KubeletRuntime {
  if (o.runtime === "fake") {
    const images = new FakeImageService();
    for (const img of catalog)
      for (const tag of img.tags) images.register(`${img.repository}:${tag}`, fakeBehaviour(img.repository));
    return {
      name: "fake",
      version: "0.1.0",
      runtimeService: new FakeRuntimeService(realClock, images),
      imageService: images,
    };
  }
  const podCIDR = o.config.podCIDR || undefined;
  const images = new ProcessImageService(dir);
  const service = new ProcessRuntimeService({ rootDir: dir, images, podCIDR, nodeIP, warmPool: o.warmPool });
  const range = podRange(service.network.podCIDR);
  return {
    name: "process",
    version: "0.1.0",
    runtimeService: service,
    imageService: images,
    streaming: service,
    // A pod address is reached through the pod network's map; any other address as it is.
    dial: (host, port) => (inRange(host, range) ? service.network.resolve(host, port) : { host, port }),
    close: () => service.close(),
  };
}

function inRange(ip: string, range: { first: number; last: number }): boolean {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p))) return false;
  const n = ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
  return n >= range.first && n <= range.last;
}

/** What the catalog's images do on the fake runtime (no processes: timers); kubemark's hollow nodes too. */
export function fakeBehaviour(repository: string) {
  switch (repository) {
    case "course/crasher":
      return { exitAfterMs: 2000, exitCode: 1, sigtermExitAfterMs: 0 };
    case "course/worker":
    case "course/echo":
      return { exitAfterMs: 1000, exitCode: 0, sigtermExitAfterMs: 0 };
    default:
      return { sigtermExitAfterMs: 100 };
  }
}
// #endregion runtime

/** The plain-HTTP /healthz on --healthz-bind-address:--healthz-port (upstream: 127.0.0.1:10248). */
async function serveHealthz(address: string, port: number, main: MainKubelet): Promise<Server> {
  const syncloop = namedCheck("syncloop", () =>
    main.kubelet.getPods() ? undefined : new Error("the sync loop is not running"),
  );
  const server = createServer((req, res) => {
    const answer = handleHealth(req.url ?? "/", { "/healthz": [syncloop] });
    res.writeHead(answer?.status ?? 404, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(answer?.body ?? "404 page not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, address, () => resolve());
  });
  return server;
}

/** Reads the kubelet's flags from argv (without the program name). */
export const parseKubeletFlags = (argv: string[]) => parseCommand(kubelet, argv);

/** Runs the kubelet until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(kubelet, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
