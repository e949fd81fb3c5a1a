/**
 * Chapter 8's "Across machines", as far as one machine can take it: `npm run cluster
 * --advertise-address=<this machine's non-loopback IPv4>` runs the cluster over that address, not
 * 127.0.0.1. The real kubectl reaches the API server at https://<ip>:<port>, verifying the CA
 * (the serving certificate holds the IP, and the API server does not listen on 127.0.0.1); every
 * kubeconfig points there; node-1 registers with InternalIP <ip>; `kubectl logs` and `kubectl
 * exec` work — the API server dialling the kubelet at that InternalIP. Then the `tls-server-name`
 * route: a second API server on the same etcd, its serving certificate (same CA) WITHOUT the IP,
 * listening on <ip>: kubectl without `tls-server-name` fails with an x509 error; with
 * `tls-server-name: kubernetes` in the kubeconfig, kubectl and our client both get in.
 * One cluster (and that one extra API server process); `afterAll` kills what they started, even
 * when a test failed. A PKI made before without the address stops a start with the file to
 * delete, before any process runs. Two machines, and kind, are not tested here (one machine, no docker).
 */
import type { ChildProcess } from "node:child_process";
import { X509Certificate } from "node:crypto";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { runKubectl } from "../apiserver/testing/kubectl-env.ts";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { ensurePKI } from "../pki/certs.ts";
import { PKIError } from "../pki/errors.ts";
import { spawnScript, stopChild, waitForOutput } from "../testing/child-process.ts";
import { freePort } from "../testing/ports.ts";
import { waitFor } from "../testing/wait-for.ts";
import { apiServerArgs, node } from "./cluster/component-flags.ts";
import { ClusterLauncher } from "./cluster/launcher.ts";
import { cmdFile, firstNonLoopbackIPv4 } from "./cluster/preflight.ts";
import { type ClusterState, killRecorded, readState } from "./cluster/state.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";
import { startSleeperPod } from "./testing/sleeper-pod.ts";

const clusterFile = new URL("./cluster.ts", import.meta.url).pathname;
const hookTimeout = 300_000;
/** eth0's address today; whatever os.networkInterfaces() says on the machine the test runs on. */
const ip = firstNonLoopbackIPv4();

describeWithTools(
  "npm run cluster --advertise-address: the cluster over this machine's network address",
  ["kubectl"],
  (tools) => {
    if (!ip) {
      it.skip("[SKIPPED: this machine has no non-loopback IPv4 address (os.networkInterfaces()), so there is no network address to run the cluster over]", () => {});
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), "cluster-netaddr-"));
    let supervisor: CommandProcess | undefined;
    let state: ClusterState | undefined;
    let port = 0;
    /** The second API server (the tls-server-name route), once started. */
    let narrowServer: ChildProcess | undefined;

    const kubectl = (kubeconfig: string, args: string[]) =>
      runKubectl({ ...process.env, KUBECONFIG: kubeconfig }, args, {
        timeoutMs: 60_000,
        kubectl: tools.kubectl.path!,
      });

    beforeAll(async () => {
      supervisor = startCommand(clusterFile, [
        "--dir",
        dir,
        "--nodes",
        "1",
        `--advertise-address=${ip}`,
        "--tracing=false",
        "--view-port=0",
      ]);
      try {
        await supervisor.waitForStdout("cluster ready", hookTimeout - 10_000);
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${supervisor.stdout()}\n${supervisor.stderr()}`);
      }
      state = readState(dir);
      port = Number(new URL(state!.server).port);
    }, hookTimeout);

    afterAll(async () => {
      if (narrowServer) await stopChild(narrowServer);
      supervisor?.kill();
      const recorded = readState(dir) ?? state;
      if (recorded) killRecorded(recorded);
      rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it("kubectl reaches the API server at https://<ip>:<port>, verifying the CA; every kubeconfig points there, and nothing listens on 127.0.0.1", async () => {
      expect(state!.server).toBe(`https://${ip}:${port}`);
      const pki = join(dir, "pki");
      const kubeconfigs = readdirSync(pki).filter((f) => f.endsWith(".kubeconfig"));
      expect(kubeconfigs).toEqual(
        expect.arrayContaining(["admin.kubeconfig", "kube-scheduler.kubeconfig", "node-node-1.kubeconfig"]),
      );
      for (const f of kubeconfigs) {
        const cluster = parse(readFileSync(join(pki, f), "utf8")).clusters[0].cluster;
        expect(cluster.server, f).toBe(`https://${ip}:${port}`);
        expect(cluster["certificate-authority-data"], f).toBeTruthy(); // verified, not skipped
        expect(cluster["tls-server-name"], f).toBeUndefined();
      }
      expect(new X509Certificate(readFileSync(join(pki, "apiserver.crt"))).checkIP(ip!)).toBe(ip);
      const r = await kubectl(state!.kubeconfig, ["get", "nodes", "--no-headers"]);
      expect(r.err).toBe("");
      expect(r.out).toMatch(/^node-1\s+Ready\s/);
      // The API server listens on the advertise address only (its --bind-address).
      const loopback = await new Promise<string>((resolve) => {
        const s = connect(port, "127.0.0.1");
        s.once("connect", () => {
          s.destroy();
          resolve("connected");
        });
        s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
      });
      expect(loopback).toBe("ECONNREFUSED");
    });

    it("registers node-1 with InternalIP <ip>", async () => {
      const r = await kubectl(state!.kubeconfig, [
        "get",
        "node",
        "node-1",
        "-o",
        'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}',
      ]);
      expect(r.err).toBe("");
      expect(r.out).toBe(ip);
    });

    it("runs kubectl logs and kubectl exec: the API server dials the kubelet at that InternalIP", async () => {
      await startSleeperPod(state!.kubeconfig, 180_000);
      const logs = await waitFor(
        "the container's first line through kubectl logs",
        async () => {
          const r = await kubectl(state!.kubeconfig, ["logs", "sleeper"]);
          return r.out.includes("sleeper: started") ? r : undefined;
        },
        60_000,
      );
      expect(logs.code).toBe(0);
      const exec = await kubectl(state!.kubeconfig, [
        "exec",
        "sleeper",
        "--",
        "sh",
        "-c",
        "echo hello; exit 3",
      ]);
      expect(exec.out).toBe("hello\n");
      expect(exec.err).toContain("command terminated with exit code 3");
    }, 240_000);

    it("a PKI made before without the address stops the start before anything runs, saying which file to delete", async () => {
      const other = mkdtempSync(join(tmpdir(), "cluster-netaddr-pki-"));
      try {
        const first = await ensurePKI({ dir: join(other, "pki"), encryptionAlgorithm: "ECDSA-P256" });
        if (first instanceof PKIError) throw first;
        const crt = join(other, "pki", "apiserver.crt");
        const started = ClusterLauncher.start({
          dir: other,
          nodes: 1,
          fakeNodes: 0,
          etcd: "ours",
          etcdMembers: 1,
          ha: 1,
          advertiseAddress: ip,
        });
        await expect(started).rejects.toThrow(
          `the PKI in ${join(other, "pki")}: certificate apiserver is invalid: it is not valid for the IP address ${ip} (${crt}); delete apiserver.crt to have it made again, or remove the whole cluster with \`npm run cluster -- down\` and start again`,
        );
        expect(readdirSync(join(other, "logs"))).toEqual([]); // nothing was started
      } finally {
        rmSync(other, { recursive: true, force: true });
      }
    });

    it("tls-server-name: a serving certificate without the IP fails kubectl with an x509 error, and lets kubectl and our client in when the kubeconfig names a SAN it holds", async () => {
      // A second API server on the cluster's etcd, with the cluster's CA and keys but a serving
      // certificate made without --apiserver-cert-extra-sans: it holds 127.0.0.1, ::1 and the
      // kubernetes.* names, not the IP it listens on.
      const narrow = join(dir, "pki-without-ip");
      mkdirSync(narrow);
      for (const f of [
        "ca.crt",
        "ca.key",
        "sa.key",
        "sa.pub",
        "apiserver-kubelet-client.crt",
        "apiserver-kubelet-client.key",
      ])
        copyFileSync(join(dir, "pki", f), join(narrow, f));
      const narrowPort = await freePort();
      const pki = await ensurePKI({
        dir: narrow,
        server: `https://${ip}:${narrowPort}`,
        encryptionAlgorithm: "ECDSA-P256",
      });
      if (pki instanceof PKIError) throw pki;
      expect(new X509Certificate(readFileSync(pki.layout.apiServerCert)).checkIP(ip!)).toBeUndefined();
      const etcd = state!.components.find((c) => c.kind === "etcd")!;
      const argv = apiServerArgs(pki.layout, narrowPort, [`http://127.0.0.1:${etcd.port}`], ip);
      const started = spawnScript(cmdFile("kube-apiserver"), argv.slice(node("kube-apiserver").length));
      narrowServer = started.child;
      await waitForOutput(started, /Serving securely on/, "the second kube-apiserver");

      const admin = pki.layout.identities.find((i) => i.id === "admin")!.kubeconfig;
      const without = await kubectl(admin, ["get", "namespace", "default", "--request-timeout=20s"]);
      expect(without.code).not.toBe(0);
      expect(without.err).toMatch(
        new RegExp(`x509: certificate is valid for .*not ${ip!.replaceAll(".", "\\.")}`),
      );

      const doc = parse(readFileSync(admin, "utf8"));
      doc.clusters[0].cluster["tls-server-name"] = "kubernetes";
      const named = join(narrow, "admin-tls-server-name.kubeconfig");
      writeFileSync(named, stringify(doc), { mode: 0o600 });
      const withName = await kubectl(named, ["get", "namespace", "default", "-o", "name"]);
      expect(withName.err).toBe("");
      expect(withName.out).toBe("namespace/default\n");

      const ours = newForConfig(buildConfigFromFlags("", named, {}));
      const oursWithout = newForConfig(buildConfigFromFlags("", admin, {}));
      try {
        expect((await ours.coreV1.namespaces().get("default")).metadata.name).toBe("default");
        await expect(oursWithout.coreV1.namespaces().get("default")).rejects.toThrow(/altnames/);
      } finally {
        ours.closeIdleConnections();
        oursWithout.closeIdleConnections();
      }
    }, 180_000);
  },
);
