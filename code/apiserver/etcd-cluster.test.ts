/**
 * The API server on a real three-member etcd cluster (`--etcd-servers=a,b,c`), and what happens
 * when the member it talks to dies: the cluster keeps its quorum (two of three), the API server's
 * etcd client fails over to the next endpoint, and no acknowledged write is lost.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../scripts/etcd-backends.ts";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "./server.ts";
import { GrpcEtcdClient } from "./storage/etcd-client.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
type Json = any;

interface Member {
  name: string;
  clientURL: string;
  child: ChildProcess;
  dataDir: string;
}

async function startCluster(binary: string, size: number): Promise<Member[]> {
  const names = Array.from({ length: size }, (_, i) => `m${i}`);
  const peers = await Promise.all(names.map(async () => `http://127.0.0.1:${await freePort()}`));
  const clients = await Promise.all(names.map(async () => `http://127.0.0.1:${await freePort()}`));
  const initialCluster = names.map((n, i) => `${n}=${peers[i]}`).join(",");
  return names.map((name, i) => {
    const dataDir = mkdtempSync(join(tmpdir(), `api-etcd-cluster-${name}-`));
    const child = spawn(
      binary,
      [
        `--name=${name}`,
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${clients[i]}`,
        `--advertise-client-urls=${clients[i]}`,
        `--listen-peer-urls=${peers[i]}`,
        `--initial-advertise-peer-urls=${peers[i]}`,
        `--initial-cluster=${initialCluster}`,
        "--initial-cluster-state=new",
        "--initial-cluster-token=api-cluster-test",
      ],
      { stdio: "ignore" },
    );
    return { name, clientURL: clients[i], child, dataDir };
  });
}

/** Waits until a linearizable read succeeds on every member (the cluster has a leader). */
async function waitReady(members: Member[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (const m of members) {
    const probe = new GrpcEtcdClient([m.clientURL], 1000);
    try {
      for (;;) {
        if (m.child.exitCode !== null) throw new Error(`etcd ${m.name} exited with ${m.child.exitCode}`);
        try {
          await probe.range({ key: new TextEncoder().encode("probe") });
          break;
        } catch (e) {
          if (Date.now() > deadline)
            throw new Error(`etcd ${m.name} not ready in 20 s: ${(e as Error).message}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    } finally {
      await probe.close();
    }
  }
}

describeWithTools("the API server on a real three-member etcd cluster", ["etcd"], (tools) => {
  let members: Member[] = [];
  let server: APIServer;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const configMap = (name: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data: { n: name },
  });

  beforeAll(async () => {
    members = await startCluster(tools.etcd.path!, 3);
    await waitReady(members);
    server = await startAPIServer({ insecurePort: 0, etcdServers: members.map((m) => m.clientURL) });
  }, 40_000);
  afterAll(async () => {
    await server?.close();
    for (const m of members) {
      if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill("SIGKILL");
      rmSync(m.dataDir, { recursive: true, force: true });
    }
  });

  it("stores through any member and keeps every acknowledged write when the first member dies", async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call("POST", "/api/v1/namespaces/default/configmaps", configMap(`before-${i}`));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      acknowledged.push(`before-${i}`);
    }
    // The other members have the writes: raft replicated them before etcd answered.
    const direct = new GrpcEtcdClient([members[2].clientURL], 2000);
    try {
      const got = await direct.range({
        key: new TextEncoder().encode("/registry/configmaps/default/before-4"),
      });
      expect(got.kvs?.length ?? 0).toBe(1);
    } finally {
      await direct.close();
    }

    // Kill the member the API server's client starts with: the two others keep a quorum.
    members[0].child.kill("SIGKILL");
    await new Promise((r) => members[0].child.once("exit", r));

    // Writes go on through the next endpoint. A request in flight at the moment of the kill may
    // fail (the client fails over on UNAVAILABLE); the loop only counts what was acknowledged.
    const deadline = Date.now() + 20_000;
    let after = 0;
    while (after < 5 && Date.now() < deadline) {
      const r = await call("POST", "/api/v1/namespaces/default/configmaps", configMap(`after-${after}`));
      if (r.status === 201) {
        acknowledged.push(`after-${after}`);
        after++;
      } else if (r.status === 409) {
        // An earlier try did commit before its answer was lost: it exists, so it counts.
        acknowledged.push(`after-${after}`);
        after++;
      } else {
        await new Promise((res) => setTimeout(res, 200));
      }
    }
    expect(after, "writes resumed after the failover").toBe(5);

    const list = await call("GET", "/api/v1/namespaces/default/configmaps");
    expect(list.status).toBe(200);
    const names = list.body.items.map((i: Json) => i.metadata.name).sort();
    expect(names).toEqual([...acknowledged].sort());

    // Watches are served by the watch cache, whose one etcd watch was on the dead member: it must
    // re-establish itself on a live one, so a watch still sees new writes. The cache may end the
    // watches it had while it re-lists (upstream does too), so — like a reflector — list, watch,
    // write, and start over if the stream ends first.
    const deadlineWatch = Date.now() + 20_000;
    let seenType = "";
    for (let attempt = 0; seenType !== "ADDED" && Date.now() < deadlineWatch; attempt++) {
      const rv = (await call("GET", "/api/v1/namespaces/default/configmaps")).body.metadata.resourceVersion;
      const controller = new AbortController();
      const watch = await fetch(
        `${server.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`,
        { signal: controller.signal },
      );
      const name = `late-${attempt}`;
      const seen = (async () => {
        const reader = watch.body!.getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return "ended";
          buf += new TextDecoder().decode(value);
          for (const line of buf.split("\n").slice(0, -1)) {
            const ev = JSON.parse(line);
            if (ev.object?.metadata?.name === name) return ev.type as string;
          }
        }
      })().catch(() => "aborted");
      const created = await call("POST", "/api/v1/namespaces/default/configmaps", configMap(name));
      if (created.status !== 201) await new Promise((r) => setTimeout(r, 200));
      seenType = await Promise.race([seen, new Promise<string>((r) => setTimeout(() => r("timeout"), 3000))]);
      controller.abort();
    }
    expect(seenType).toBe("ADDED");
  }, 60_000);
});
