import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { freePort } from "../testing/ports.ts";
import { FlagError, parseAPIServerFlags } from "./kube-apiserver.ts";
import { startCommand, waitFor } from "./testing/command-process.ts";

/** chapter 7: no kubelet client flag given — upstream's default address types. */
const defaultKubeletClientFiles = {
  preferredAddressTypes: ["Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"],
};

const anonymousWarning =
  "AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer";

describe("parseAPIServerFlags", () => {
  it("gives the defaults: embedded store in memory, HTTPS on 127.0.0.1:6443, anonymous off under AlwaysAllow", () => {
    expect(parseAPIServerFlags([])).toEqual({
      run: {
        etcdServers: undefined,
        dataDir: undefined,
        watchCache: true,
        compactionIntervalMs: 300_000,
        verbosity: 3,
        securePort: 6443,
        secureServing: { bindAddress: "127.0.0.1" },
        // Upstream's ApplyAuthorization: AlwaysAllow (the default mode) turns anonymous off.
        authentication: { anonymousAuth: false },
        kubeletClientFiles: defaultKubeletClientFiles,
        warnings: [anonymousWarning],
      },
    });
  });

  it("chapter 7: reads the kubelet client flags, a certificate only with its key, known address types only", () => {
    expect(
      parseAPIServerFlags([
        "--kubelet-client-certificate=/pki/apiserver-kubelet-client.crt",
        "--kubelet-client-key=/pki/apiserver-kubelet-client.key",
        "--kubelet-certificate-authority=/pki/ca.crt",
        "--kubelet-preferred-address-types=InternalIP,Hostname",
      ]),
    ).toMatchObject({
      run: {
        kubeletClientFiles: {
          cert: "/pki/apiserver-kubelet-client.crt",
          key: "/pki/apiserver-kubelet-client.key",
          ca: "/pki/ca.crt",
          preferredAddressTypes: ["InternalIP", "Hostname"],
        },
      },
    });
    const lone = parseAPIServerFlags(["--kubelet-client-certificate=/pki/a.crt"]);
    expect(lone instanceof FlagError && lone.message).toBe(
      "kube-apiserver: --kubelet-client-certificate and --kubelet-client-key must be given together",
    );
    const bad = parseAPIServerFlags(["--kubelet-preferred-address-types=InternalIP,Pigeon"]);
    expect(bad instanceof FlagError && bad.message).toBe(
      'kube-apiserver: invalid --kubelet-preferred-address-types value "Pigeon": use Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP',
    );
  });

  it("keeps anonymous on under any other authorizer, and off when asked, without a warning", () => {
    const rbac = parseAPIServerFlags(["--authorization-mode=Node,RBAC"]);
    expect(rbac).toMatchObject({ run: { authentication: { anonymousAuth: true }, warnings: [] } });
    const withAllow = parseAPIServerFlags(["--authorization-mode=RBAC,AlwaysAllow"]);
    expect(withAllow).toMatchObject({
      run: { authentication: { anonymousAuth: false }, warnings: [anonymousWarning] },
    });
    const off = parseAPIServerFlags(["--anonymous-auth=false"]);
    expect(off).toMatchObject({ run: { authentication: { anonymousAuth: false }, warnings: [] } });
    // Plain HTTP has no authentication to turn off: nothing to warn about.
    expect(parseAPIServerFlags(["--insecure-port=8080"])).toMatchObject({ run: { warnings: [] } });
  });

  it("chapter 2's command line (--insecure-port alone) serves plain HTTP only; any secure flag adds HTTPS", () => {
    const only = parseAPIServerFlags(["--insecure-port=8080"]);
    expect(only).toMatchObject({ run: { insecurePort: 8080, insecureBindAddress: "127.0.0.1" } });
    expect((only as { run: object }).run).not.toHaveProperty("securePort");
    expect(parseAPIServerFlags(["--insecure-port=8080", "--token-auth-file=/t.csv"])).toMatchObject({
      run: { insecurePort: 8080, securePort: 6443, authentication: { tokenAuthFile: "/t.csv" } },
    });
    expect(
      parseAPIServerFlags([
        "--secure-port=0",
        "--bind-address=::1",
        "--tls-cert-file=a.crt",
        "--tls-private-key-file=a.key",
        "--client-ca-file=ca.crt",
        "--anonymous-auth=false",
      ]),
    ).toEqual({
      run: expect.objectContaining({
        securePort: 0,
        secureServing: { bindAddress: "::1", tlsCertFile: "a.crt", tlsPrivateKeyFile: "a.key" },
        authentication: { clientCAFile: "ca.crt", anonymousAuth: false },
      }),
    });
    expect(parseAPIServerFlags(["--tls-cert-file=a.crt"])).toBeInstanceOf(FlagError);
  });

  it("reads --flag=value and --flag value", () => {
    expect(
      parseAPIServerFlags([
        "--etcd-servers=http://127.0.0.1:2379,http://127.0.0.1:22379",
        "--insecure-port",
        "0",
        "--insecure-bind-address=0.0.0.0",
        "--watch-cache=false",
        "--etcd-compaction-interval=1m30s",
        "-v",
        "0",
      ]),
    ).toEqual({
      run: {
        etcdServers: ["http://127.0.0.1:2379", "http://127.0.0.1:22379"],
        dataDir: undefined,
        insecurePort: 0,
        insecureBindAddress: "0.0.0.0",
        watchCache: false,
        compactionIntervalMs: 90_000,
        verbosity: 0,
        kubeletClientFiles: defaultKubeletClientFiles,
        warnings: [],
      },
    });
    expect(parseAPIServerFlags(["--data-dir", "/tmp/x"])).toMatchObject({ run: { dataDir: "/tmp/x" } });
  });

  it("refuses bad flags in one line that says what to do", () => {
    const err = (argv: string[]) => {
      const r = parseAPIServerFlags(argv);
      return r instanceof FlagError ? r.message : `no error: ${JSON.stringify(r)}`;
    };
    // pflag's words, as the real kube-apiserver prints them, with a pointer to --help.
    expect(err(["--secure-prot=6443"])).toBe(
      "kube-apiserver: unknown flag: --secure-prot (see kube-apiserver --help)",
    );
    expect(err(["--insecure-port=http"])).toBe(
      'kube-apiserver: invalid argument "http" for "--insecure-port" flag: use a port number from 0 to 65535',
    );
    expect(err(["--etcd-servers=127.0.0.1:2379"])).toContain("write it as http://host:port");
    expect(err(["--etcd-compaction-interval=5 minutes"])).toContain("use a duration such as 5m0s");
    expect(err(["--etcd-servers"])).toBe("kube-apiserver: flag needs an argument: --etcd-servers");
    // chapter 3: RBAC — upstream's messages for a bad --authorization-mode.
    expect(err(["--authorization-mode=RBAC,Magic"])).toContain(
      'authorization-mode "Magic" is not a valid mode',
    );
    expect(parseAPIServerFlags(["--authorization-mode=Node,RBAC"])).toMatchObject({
      run: { authorizationModes: ["Node", "RBAC"] },
    });
    expect(err(["serve"])).toBe(
      'kube-apiserver: "kube-apiserver" does not take any arguments, got ["serve"]',
    );
    expect(parseAPIServerFlags(["--help"])).toMatchObject({
      print: expect.stringContaining("--insecure-port"),
    });
  });
});

const entry = fileURLToPath(new URL("./kube-apiserver.ts", import.meta.url));

const run = (args: string[]) => startCommand(entry, args);

function servingURL(stderr: string): string {
  const m = /Serving insecurely on (\S+)/.exec(stderr);
  if (!m) throw new Error(`no ready line in: ${stderr}`);
  return `http://${m[1]}`;
}

describe("the kube-apiserver command", () => {
  it("prints its ready line, serves, logs requests, and exits 0 on SIGTERM", async () => {
    const p = run(["--insecure-port=0"]);
    try {
      await waitFor(() => p.stderr().includes("Serving insecurely on"), "the ready line");
      const url = servingURL(p.stderr());
      const list = await (await fetch(`${url}/api/v1/namespaces`)).json();
      expect(list.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toContain("kube-system");
      // An open watch must not hold up the shutdown.
      const watch = await fetch(`${url}/api/v1/pods?watch=true`);
      expect(watch.status).toBe(200);
      await waitFor(
        () => p.stderr().includes('verb="LIST" URI="/api/v1/namespaces"'),
        "the request log line",
      );
      p.child.kill("SIGTERM");
      expect(await p.waitForExit()).toBe(0);
      expect(p.stderr()).toContain("Received SIGTERM; shutting down");
    } finally {
      p.child.kill("SIGKILL");
    }
  });

  it("chapter 3: serves HTTPS and plain HTTP together, and says so in upstream's words", async () => {
    const certDir = await mkdtemp(join(tmpdir(), "apiserver-certs-"));
    const p = run(["--secure-port=0", "--insecure-port=0", `--cert-dir=${certDir}`]);
    try {
      await waitFor(() => p.stderr().includes("Serving securely on"), "the secure ready line");
      expect(p.stderr()).toContain(`Generated self-signed cert (${join(certDir, "apiserver.crt")}`);
      expect(p.stderr()).toMatch(
        /Serving insecurely on 127\.0\.0\.1:\d+ .*\nServing securely on 127\.0\.0\.1:\d+ /,
      );
      const secure = /Serving securely on (\S+)/.exec(p.stderr())?.[1];
      const ca = await readFile(join(certDir, "apiserver.crt"), "utf8");
      const status = await new Promise<number>((resolve, reject) => {
        request(`https://${secure}/version`, { ca }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on("error", reject)
          .end();
      });
      // No credential, and no anonymous under AlwaysAllow (upstream's warning says so): 401.
      expect(p.stderr()).toContain(anonymousWarning);
      expect(status).toBe(401);
      expect((await fetch(`${servingURL(p.stderr())}/healthz`)).status).toBe(200);
    } finally {
      p.child.kill("SIGKILL");
      await rm(certDir, { recursive: true, force: true });
    }
  });

  it("exits 2 with one line for a bad flag", async () => {
    const p = run(["--insecure-port=http"]);
    expect(await p.waitForExit()).toBe(2);
    expect(p.stderr().trim().split("\n")).toHaveLength(1);
  });
});

describeWithTools("kube-apiserver --etcd-servers with the real etcd", ["etcd"], (tools) => {
  it("keeps its objects in etcd: they outlive the API server", async () => {
    const dir = await mkdtemp(join(tmpdir(), "apiserver-etcd-"));
    const port = await freePort();
    const peer = await freePort();
    const etcdURL = `http://127.0.0.1:${port}`;
    const etcd = spawn(
      tools.etcd.path as string,
      [
        `--data-dir=${join(dir, "etcd")}`,
        `--listen-client-urls=${etcdURL}`,
        `--advertise-client-urls=${etcdURL}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=default=http://127.0.0.1:${peer}`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let etcdLog = "";
    etcd.stderr?.on("data", (d) => {
      etcdLog += d;
    });
    try {
      await waitFor(() => etcdLog.includes("ready to serve client requests"), "etcd");
      const first = run([`--etcd-servers=${etcdURL}`, "--insecure-port=0"]);
      await waitFor(() => first.stderr().includes("Serving insecurely on"), "the first API server");
      const created = await fetch(`${servingURL(first.stderr())}/api/v1/namespaces/default/configmaps`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "kept" },
          data: { a: "b" },
        }),
      });
      expect(created.status).toBe(201);
      first.child.kill("SIGTERM");
      expect(await first.waitForExit()).toBe(0);

      const second = run([`--etcd-servers=${etcdURL}`, "--insecure-port=0"]);
      try {
        await waitFor(() => second.stderr().includes("Serving insecurely on"), "the second API server");
        const got = await (
          await fetch(`${servingURL(second.stderr())}/api/v1/namespaces/default/configmaps/kept`)
        ).json();
        expect(got.data).toEqual({ a: "b" });
        second.child.kill("SIGTERM");
        expect(await second.waitForExit()).toBe(0);
      } finally {
        second.child.kill("SIGKILL");
      }
    } finally {
      etcd.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
