/**
 * kube-controller-manager as a learner runs it: flags read as upstream's, a bad one refused in
 * one line, and the binary itself started as a child against our API server over HTTPS with the
 * PKI's kube-controller-manager.kubeconfig, stopped by SIGTERM with exit 0.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { ensurePKI, type PKILayout } from "../pki/certs.ts";
import { PKIError } from "../pki/errors.ts";
import { FlagError } from "./cli/flag.ts";
import { parseControllerManagerFlags } from "./kube-controller-manager.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";

const file = new URL("./kube-controller-manager.ts", import.meta.url).pathname;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("kube-controller-manager flags", () => {
  it("has upstream's defaults", () => {
    const got = parseControllerManagerFlags(["--master=http://127.0.0.1:8080"]);
    expect(got).toMatchObject({
      run: {
        controllers: ["*"],
        config: {
          concurrentReplicaSetSyncs: 5,
          concurrentDeploymentSyncs: 5,
          concurrentGCSyncs: 20,
          concurrentNamespaceSyncs: 10,
          concurrentServiceAccountTokenSyncs: 5,
          concurrentResourceQuotaSyncs: 5,
          resourceQuotaSyncPeriodMs: 5 * 60_000,
        },
        rest: { host: "http://127.0.0.1:8080", qps: 20, burst: 30 },
        useServiceAccountCredentials: false,
        leaderElect: true,
        // chapter 6
        leaderElection: {
          leaderElect: true,
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 2_000,
          resourceLock: "leases",
          resourceName: "kube-controller-manager",
          resourceNamespace: "kube-system",
        },
        securePort: 10257,
        bindAddress: "0.0.0.0",
      },
    });
  });

  it("reads --controllers with aliases, and refuses an unknown name in one line listing the known ones", () => {
    expect(parseControllerManagerFlags(["--master=http://x:1", "--controllers=*,-namespace"])).toMatchObject({
      run: { controllers: ["*", "-namespace-controller"] },
    });
    // A StringSlice, as upstream's: repeating the flag adds to the list.
    expect(
      parseControllerManagerFlags([
        "--master=http://x:1",
        "--controllers=*",
        "--controllers=-serviceaccount",
      ]),
    ).toMatchObject({ run: { controllers: ["*", "-serviceaccount-controller"] } });
    const bad = parseControllerManagerFlags(["--master=http://x:1", "--controllers=*,-namespaces"]);
    expect(bad).toBeInstanceOf(FlagError);
    expect((bad as FlagError).message).toBe(
      'kube-controller-manager: --controllers: "namespaces" is not in the list of known controllers (known: deployment-controller, disruption-controller, endpoints-controller, endpointslice-controller, garbage-collector-controller, namespace-controller, node-lifecycle-controller, replicaset-controller, resourcequota-controller, serviceaccount-controller, taint-eviction-controller; use * for all, -name to disable one)',
    );
  });

  // chapter 7
  it("reads the node lifecycle and Endpoints controllers' flags with upstream's 1.32 defaults", () => {
    expect(parseControllerManagerFlags(["--master=http://x:1"])).toMatchObject({
      run: {
        config: {
          concurrentEndpointSyncs: 5,
          endpointUpdatesBatchPeriodMs: 0,
          concurrentServiceEndpointSyncs: 5,
          maxEndpointsPerSlice: 100,
          endpointSliceUpdatesBatchPeriodMs: 0,
          nodeMonitorPeriodMs: 5_000,
          nodeMonitorGracePeriodMs: 50_000,
          nodeStartupGracePeriodMs: 60_000,
          nodeEvictionRate: 0.1,
          secondaryNodeEvictionRate: 0.01,
          largeClusterSizeThreshold: 50,
          unhealthyZoneThreshold: 0.55,
        },
      },
    });
    expect(
      parseControllerManagerFlags([
        "--master=http://x:1",
        "--node-monitor-period=500ms",
        "--node-monitor-grace-period=4s",
        "--node-startup-grace-period=10s",
        "--node-eviction-rate=2.5",
        "--concurrent-endpoint-syncs=2",
        "--controllers=*,-nodelifecycle,-endpoint",
      ]),
    ).toMatchObject({
      run: {
        controllers: ["*", "-node-lifecycle-controller", "-endpoints-controller"],
        config: {
          nodeMonitorPeriodMs: 500,
          nodeMonitorGracePeriodMs: 4_000,
          nodeStartupGracePeriodMs: 10_000,
          nodeEvictionRate: 2.5,
          concurrentEndpointSyncs: 2,
        },
      },
    });
    expect(parseControllerManagerFlags(["--master=http://x:1", "--node-eviction-rate=fast"])).toBeInstanceOf(
      FlagError,
    );
  });

  // resource quota controller
  it("reads the resource quota controller's flags, the period as a Go duration", () => {
    expect(
      parseControllerManagerFlags([
        "--master=http://x:1",
        "--concurrent-resource-quota-syncs=2",
        "--resource-quota-sync-period=30s",
      ]),
    ).toMatchObject({
      run: { config: { concurrentResourceQuotaSyncs: 2, resourceQuotaSyncPeriodMs: 30_000 } },
    });
    expect(
      parseControllerManagerFlags(["--master=http://x:1", "--resource-quota-sync-period=0s"]),
    ).toBeInstanceOf(FlagError);
  });

  // chapter 6: the shared leader-election flags, and upstream's words for what they cannot make.
  it("reads the --leader-elect* flags and refuses a lock other than leases", () => {
    expect(
      parseControllerManagerFlags([
        "--master=http://x:1",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-resource-namespace=other",
      ]),
    ).toMatchObject({
      run: {
        leaderElection: {
          leaseDurationMs: 30_000,
          resourceNamespace: "other",
          resourceName: "kube-controller-manager",
        },
      },
    });
    const bad = parseControllerManagerFlags([
      "--master=http://x:1",
      "--leader-elect-resource-lock=configmaps",
    ]);
    expect((bad as FlagError).message).toBe(
      "kube-controller-manager: couldn't create resource lock: configmaps lock is removed, migrate to leases",
    );
    expect(
      parseControllerManagerFlags([
        "--master=http://x:1",
        "--leader-elect=false",
        "--leader-elect-resource-lock=x",
      ]),
    ).toMatchObject({ run: { leaderElect: false } });
  });

  it("needs --kubeconfig or --master, and says so with an example", () => {
    const err = parseControllerManagerFlags([]);
    expect(err).toBeInstanceOf(FlagError);
    expect((err as FlagError).message).toContain("--kubeconfig is required (or --master)");
  });
});

describe("kube-controller-manager as a process", () => {
  let dir: string;
  let layout: PKILayout;
  let server: APIServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "kcm-cmd-"));
    const port = await freePort();
    const pki = await ensurePKI({
      dir,
      server: `https://127.0.0.1:${port}`,
      encryptionAlgorithm: "ECDSA-P256",
    });
    if (pki instanceof PKIError) throw pki;
    layout = pki.layout;
    server = await startAPIServer({
      securePort: port,
      secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
      authentication: { clientCAFile: layout.caCert },
      authorizationModes: ["RBAC"],
    });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("starts its controllers with the PKI's identity and exits 0 on SIGTERM", async () => {
    const kubeconfig = layout.identities.find((i) => i.id === "kube-controller-manager")
      ?.kubeconfig as string;
    let p: CommandProcess | undefined;
    try {
      p = startCommand(file, [
        `--kubeconfig=${kubeconfig}`,
        "--controllers=*,-namespace,-replicaset,-garbagecollector,-deployment,-resourcequota,-disruption,-endpoint,-endpointslice,-nodelifecycle,-taint-eviction-controller",
        "--secure-port=0",
      ]);
      await p.waitForStderr("Started 1 controller(s): serviceaccount-controller");
      await p.waitForStderr('"Caches are synced" controller="service account"');
      const err = p.stderr();
      // chapter 6: it elects by default; alone, it takes the Lease at once, then starts its controllers.
      expect(err).toContain("successfully acquired lease kube-system/kube-controller-manager");
      expect(err).toContain('"Warning: controller is disabled" controller="namespace-controller"');
      p.child.kill("SIGTERM");
      expect(await p.waitForExit()).toBe(0);
      expect(p.stderr()).toContain("Received SIGTERM; shutting down");
      expect(p.stderr()).toContain('"Shutting down service account controller"');
    } finally {
      p?.kill();
    }
  });

  it("a bad flag is one line with the fix, exit 2", async () => {
    let p: CommandProcess | undefined;
    try {
      p = startCommand(file, ["--kubeconfig=/nonexistent", "--controllers=nope"]);
      expect(await p.waitForExit()).toBe(2);
      const lines = p.stderr().trim().split("\n");
      expect(lines).toEqual([
        'kube-controller-manager: --controllers: "nope" is not in the list of known controllers (known: deployment-controller, disruption-controller, endpoints-controller, endpointslice-controller, garbage-collector-controller, namespace-controller, node-lifecycle-controller, replicaset-controller, resourcequota-controller, serviceaccount-controller, taint-eviction-controller; use * for all, -name to disable one)',
      ]);
    } finally {
      p?.kill();
    }
  });
});
