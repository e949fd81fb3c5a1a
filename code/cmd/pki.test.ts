import "reflect-metadata";
import { X509Certificate } from "node:crypto";
import { copyFile, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as x509 from "@peculiar/x509";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { main } from "./pki.ts";

/** Runs the command in this process; returns its exit code and what it printed. */
async function pki(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const subject = (pem: string) => {
  const name = new x509.X509Certificate(new X509Certificate(pem).raw).subjectName;
  return { cn: name.getField("CN"), o: name.getField("O") };
};

describe("npm run pki", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "pki-cmd-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const read = (name: string) => readFile(join(dir, "pki", name), "utf8");

  it("writes exactly the fixed layout, with the identities in their certificates", async () => {
    const r = await pki(["--dir", join(dir, "pki"), "--nodes", "a,b"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const ids = ["admin", "kube-scheduler", "kube-controller-manager", "node-a", "node-b"];
    expect((await readdir(join(dir, "pki"))).sort()).toEqual(
      [
        "ca.crt",
        "ca.key",
        "apiserver.crt",
        "apiserver.key",
        "apiserver-kubelet-client.crt",
        "apiserver-kubelet-client.key",
        "sa.key",
        "sa.pub",
        ...ids.flatMap((id) => [`${id}.crt`, `${id}.key`, `${id}.kubeconfig`]),
      ].sort(),
    );
    const server = new X509Certificate(await read("apiserver.crt"));
    expect(server.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(server.checkIP("::1")).toBe("::1");
    expect(server.checkHost("localhost")).toBe("localhost");
    expect(server.checkIssued(new X509Certificate(await read("ca.crt")))).toBe(true);
    expect(subject(await read("admin.crt"))).toEqual({ cn: ["kubernetes-admin"], o: ["system:masters"] });
    expect(subject(await read("kube-scheduler.crt"))).toEqual({ cn: ["system:kube-scheduler"], o: [] });
    expect(subject(await read("kube-controller-manager.crt"))).toEqual({
      cn: ["system:kube-controller-manager"],
      o: [],
    });
    expect(subject(await read("node-b.crt"))).toEqual({ cn: ["system:node:b"], o: ["system:nodes"] });
    const kubeconfig = parse(await read("node-a.kubeconfig"));
    expect(kubeconfig.clusters[0].cluster.server).toBe("https://127.0.0.1:6443");
    // One progress line per file, in kubeadm's words.
    expect(r.stdout).toContain('[certs] Generating "ca" certificate and key');
    expect(r.stdout).toContain('[kubeconfig] Writing "node-b.kubeconfig" kubeconfig file');
  });

  it("defaults to one node, node-1 (identity node-node-1), and points kubeconfigs at --server", async () => {
    expect((await pki(["--dir", join(dir, "pki"), "--server", "https://10.0.0.1:7443"])).code).toBe(0);
    expect(subject(await read("node-node-1.crt")).cn).toEqual(["system:node:node-1"]);
    expect(parse(await read("admin.kubeconfig")).clusters[0].cluster.server).toBe("https://10.0.0.1:7443");
  });

  it("--apiserver-cert-extra-sans puts IPs and DNS names in the serving certificate, and --help shows it", async () => {
    const r = await pki([
      "--dir",
      join(dir, "pki"),
      "--apiserver-cert-extra-sans",
      "192.0.2.7,api.example.com",
      "--apiserver-cert-extra-sans=*.lb.example.com",
    ]);
    expect(r.stderr).toBe("");
    const server = new X509Certificate(await read("apiserver.crt"));
    expect(server.checkIP("192.0.2.7")).toBe("192.0.2.7");
    expect(server.checkHost("api.example.com")).toBe("api.example.com");
    expect(server.checkHost("x.lb.example.com")).toBe("*.lb.example.com"); // the wildcard matched
    expect(server.checkIP("127.0.0.1")).toBe("127.0.0.1"); // the defaults stay
    // kubeadm's line: which names the serving certificate was signed for.
    expect(r.stdout).toContain(
      "[certs] apiserver serving cert is signed for DNS names [kubernetes kubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local localhost api.example.com *.lb.example.com] and IPs [127.0.0.1 ::1 192.0.2.7]",
    );
    const help = await pki(["--help"]);
    expect(help.stdout + help.stderr).toContain("--apiserver-cert-extra-sans");
  });

  it("stops on an existing serving certificate without a newly asked SAN, naming it and the fix", async () => {
    const at = join(dir, "pki");
    expect((await pki(["--dir", at])).code).toBe(0);
    const key = await read("apiserver.key");
    const r = await pki(["--dir", at, "--apiserver-cert-extra-sans", "192.0.2.7"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `pki: certificate apiserver is invalid: it is not valid for the IP address 192.0.2.7 (${join(at, "apiserver.crt")}); delete apiserver.crt to have it made again, or re-run with --force to make every key and certificate again\n`,
    );
    // The fix it names: without apiserver.crt the next run signs one for the kept key.
    await rm(join(at, "apiserver.crt"));
    expect((await pki(["--dir", at, "--apiserver-cert-extra-sans", "192.0.2.7"])).code).toBe(0);
    expect(new X509Certificate(await read("apiserver.crt")).checkIP("192.0.2.7")).toBe("192.0.2.7");
    expect(await read("apiserver.key")).toBe(key);
  });

  it("keeps existing keys on a re-run, and makes them anew with --force", async () => {
    const at = join(dir, "pki");
    await pki(["--dir", at]);
    const [ca, key] = [await read("ca.crt"), await read("admin.key")];
    const again = await pki(["--dir", at]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("0 files written");
    expect([await read("ca.crt"), await read("admin.key")]).toEqual([ca, key]);
    expect((await pki(["--dir", at, "--force"])).code).toBe(0);
    expect(await read("ca.crt")).not.toBe(ca);
    expect(await read("admin.key")).not.toBe(key);
  });

  it("refuses bad flags in one line, exit 2", async () => {
    const cases: [string[], string][] = [
      [[], "pki: --dir is required (e.g. npm run pki -- --dir ./pki)"],
      [["--dir", dir, "--nodes", "Node_A"], 'pki: invalid node name "Node_A"'],
      [["--dir", dir, "--nodes", "a,a"], 'pki: node name "a" is given twice'],
      [["--dir", dir, "--server", "http://127.0.0.1:6443"], "the API server is reached over https"],
      [["--dir", dir, "--bogus"], "pki: unknown flag: --bogus"],
      [
        ["--dir", dir, "--apiserver-cert-extra-sans", "api_server"],
        'pki: invalid extra SAN "api_server": altname is not a valid IP address, DNS label or a DNS label with subdomain wildcards',
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await pki(argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n"), argv.join(" ")).toHaveLength(1);
      expect(r.stderr, argv.join(" ")).toContain(message);
    }
  });

  it("stops with exit 1 and the file at fault when the directory holds a wrong file", async () => {
    const at = join(dir, "pki");
    await pki(["--dir", at]);
    const other = await mkdtemp(join(tmpdir(), "pki-other-"));
    try {
      await pki(["--dir", other]);
      // A client certificate from another CA, put in place of ours.
      await copyFile(join(other, "admin.crt"), join(at, "admin.crt"));
      await copyFile(join(other, "admin.key"), join(at, "admin.key"));
      const r = await pki(["--dir", at]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("admin.crt");
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
