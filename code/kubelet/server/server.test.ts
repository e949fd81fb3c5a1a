import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type KubeletServer, startKubeletServer } from "./server.ts";

let dir: string | undefined;
const servers: KubeletServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const never = { authorize: async () => ({ allowed: false, reason: "" }) };
const host = { getPods: () => [], findContainer: () => ({ error: "none" }) };

describe("the kubelet's serving certificate", () => {
  it("is self-signed for the node when none is given, kept in --cert-dir and reused on restart", async () => {
    dir = await mkdtemp(join(tmpdir(), "kubelet-cert-"));
    const certDir = join(dir, "pki");
    const opts = { nodeName: "node-7", host, port: 0, certDir, clientCA: "", authorizer: never };
    const first = await startKubeletServer(opts);
    servers.push(first);
    expect(await readFile(join(certDir, "kubelet.crt"), "utf8")).toBe(first.cert);
    const leaf = new X509Certificate(first.cert);
    expect(leaf.subject).toMatch(/^CN=node-7@\d+$/);
    expect(leaf.subjectAltName).toContain("DNS:node-7");
    expect(leaf.subjectAltName).toContain("IP Address:127.0.0.1");
    await first.close();
    servers.splice(0);
    const second = await startKubeletServer(opts);
    servers.push(second);
    expect(second.cert).toBe(first.cert);
  });
});
