// The real `etcdctl` (v3.4/v3.5, Debian's etcd-client) against our gRPC server: every command
// below prints what it prints against real etcd (checked side by side with etcd 3.4.23).
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { type Etcd, startEtcd } from "../embed/etcd.ts";
import { toBytes } from "../pkg/bytes.ts";

interface Result {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Polls until `check` holds; tests wait for conditions, never for a fixed time. */
async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describeWithTools("etcdctl against our etcd", ["etcdctl"], (tools) => {
  let etcd: Etcd;
  let endpoint: string;

  beforeAll(async () => {
    const started = await startEtcd({
      name: "default",
      dataDir: "",
      inMemory: true,
      listenClientURLs: ["http://127.0.0.1:0"],
      advertiseClientURLs: ["http://127.0.0.1:0"],
    });
    if (started instanceof Error) throw started;
    etcd = started;
    endpoint = etcd.clientAddresses[0];
  });
  afterAll(async () => {
    await etcd?.close();
  });

  function start(args: string[]): ChildProcess {
    return spawn(tools.etcdctl.path!, [`--endpoints=${endpoint}`, ...args], {
      env: { ...process.env, ETCDCTL_API: "3" },
    });
  }

  /** Runs etcdctl to completion (asynchronously: our server runs in this process). */
  function etcdctl(args: string[], stdin = ""): Promise<Result> {
    const child = start(args);
    const out: Result = { stdout: "", stderr: "", code: null };
    child.stdout?.on("data", (d) => {
      out.stdout += d;
    });
    child.stderr?.on("data", (d) => {
      out.stderr += d;
    });
    child.stdin?.end(stdin);
    return new Promise((resolve) => child.on("close", (code) => resolve({ ...out, code })));
  }

  /** The last line etcdctl printed on stderr: `Error: …` (earlier lines are client retry logs). */
  const lastError = (r: Result) => r.stderr.trim().split("\n").pop();

  /** `etcdctl watch …` left running: its output so far, and a way to stop it. */
  function watchProcess(args: string[]) {
    const child = start(["watch", ...args]);
    let output = "";
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    const exited = new Promise((resolve) => child.on("close", resolve));
    return {
      write: (line: string) => child.stdin?.write(line),
      output: () => output,
      waitForOutput: (text: string) =>
        waitFor(() => output.includes(text), `watch output ${JSON.stringify(text)}`),
      exited,
      stop: async () => {
        child.kill("SIGTERM");
        await exited;
      },
    };
  }

  const rev = () => etcd.server.kv.rev();
  /** Setup goes straight to the store (fast); the commands under test go through etcdctl. */
  const put = async (key: string, value: string) => {
    const r = await etcd.server.put({ key: toBytes(key), value: toBytes(value) });
    if (r instanceof Error) throw r;
  };
  const del = async (key: string) => {
    const r = await etcd.server.deleteRange({ key: toBytes(key) });
    if (r instanceof Error) throw r;
  };

  it("put and get: --prefix, --rev, --limit, --keys-only, --from-key, --sort-by", async () => {
    expect((await etcdctl(["put", "g/a", "1"])).stdout).toBe("OK\n");
    const afterA = rev();
    await put("g/b", "2");
    await put("g/a", "3");
    await put("h", "4");

    const outputs = await Promise.all(
      [
        ["get", "g/", "--prefix"],
        ["get", "g/a", `--rev=${afterA}`],
        ["get", "g/", "--prefix", "--limit", "1"],
        ["get", "g/", "--prefix", "--keys-only"],
        ["get", "g/b", "--from-key"],
        ["get", "g/", "--prefix", "--sort-by=MODIFY", "--order=DESCEND"],
        ["get", "g/", "--prefix", "--sort-by=VALUE", "--order=ASCEND"],
        ["get", "nothing"],
      ].map(async (args) => (await etcdctl(args)).stdout),
    );
    expect(outputs).toEqual([
      "g/a\n3\ng/b\n2\n",
      "g/a\n1\n",
      "g/a\n3\n",
      "g/a\n\ng/b\n\n",
      "g/b\n2\nh\n4\n",
      "g/a\n3\ng/b\n2\n",
      "g/b\n2\ng/a\n3\n",
      "",
    ]);
  });

  it("get -w json: etcd's header ids, base64 keys and values, more and count", async () => {
    await put("j/a", "x");
    await put("j/b", "y");
    const { stdout } = await etcdctl(["get", "j/", "--prefix", "--limit=1", "-w", "json"]);
    // Checked on the text: the ids do not fit in a JavaScript number.
    expect(stdout).toContain(
      `"header":{"cluster_id":14841639068965178418,"member_id":10276657743932975437,"revision":${rev()},"raft_term":2}`,
    );
    const json = JSON.parse(stdout);
    expect(json.kvs).toHaveLength(1);
    expect(json.kvs[0]).toMatchObject({ key: Buffer.from("j/a").toString("base64"), version: 1 });
    expect(Buffer.from(json.kvs[0].value, "base64").toString()).toBe("x");
    expect([json.more, json.count]).toEqual([true, 2]);
  });

  it("del: a count, --prev-kv, --prefix", async () => {
    await put("d/a", "1");
    await put("d/b", "2");
    await put("d/c", "3");
    expect((await etcdctl(["del", "d/a", "--prev-kv"])).stdout).toBe("1\nd/a\n1\n");
    expect((await etcdctl(["del", "d/nothing"])).stdout).toBe("0\n");
    expect((await etcdctl(["del", "d/", "--prefix"])).stdout).toBe("2\n");
    expect((await etcdctl(["get", "d/", "--prefix"])).stdout).toBe("");
  });

  it("txn read from stdin: compares, success and failure branches", async () => {
    await put("t/k", "v1");
    const success = await etcdctl(["txn"], 'value("t/k") = "v1"\n\nput t/k v2\nget t/k\n\nput t/k never\n\n');
    expect(success.stdout).toBe("SUCCESS\n\nOK\n\nt/k\nv2\n");

    const failure = await etcdctl(["txn"], 'mod("t/k") > "100000"\n\nput t/k never\n\nget t/k\n\n');
    expect(failure.stdout).toBe("FAILURE\n\nt/k\nv2\n");

    const created = await etcdctl(["txn", "-w", "json"], 'version("t/new") = "0"\n\nput t/new 1\n\n\n');
    const json = JSON.parse(created.stdout);
    expect(json.succeeded).toBe(true);
    expect(json.header.revision).toBe(rev());

    // -i asks for each part, then answers the same way.
    const interactive = await etcdctl(["txn", "-i"], 'value("t/k") = "v2"\n\ndel t/k\n\n\n');
    expect(interactive.stdout).toBe(
      "compares:\nsuccess requests (get, put, del):\nfailure requests (get, put, del):\nSUCCESS\n\n1\n",
    );
  });

  it("txn errors: too many operations, duplicate key", async () => {
    const ops = Array.from({ length: 129 }, (_, i) => `put t/many${i} v`).join("\n");
    const [tooMany, dup] = await Promise.all([
      etcdctl(["txn"], `\n${ops}\n\n\n`),
      etcdctl(["txn"], "\nput t/dup a\nput t/dup b\n\n\n"),
    ]);
    expect([tooMany.code, lastError(tooMany)]).toEqual([
      1,
      "Error: etcdserver: too many operations in txn request",
    ]);
    expect([dup.code, lastError(dup)]).toEqual([1, "Error: etcdserver: duplicate key given in txn request"]);
  });

  it("watch --prefix: events as they happen", async () => {
    const before = etcd.server.kv.synced.size;
    const w = watchProcess(["w/", "--prefix"]);
    await waitFor(() => etcd.server.kv.synced.size === before + 1, "etcdctl's watch to be registered");
    await put("w/a", "1");
    await put("other", "x");
    await del("w/a");
    await w.waitForOutput("DELETE\nw/a\n");
    await w.stop();
    expect(w.output()).toBe("PUT\nw/a\n1\nDELETE\nw/a\n\n");
  });

  it("watch --rev --prev-kv: history replayed, with the previous values", async () => {
    const from = rev() + 1;
    await put("wr/k", "a");
    await put("wr/k", "b");
    await del("wr/k");
    const w = watchProcess(["wr/k", `--rev=${from}`, "--prev-kv"]);
    await w.waitForOutput("DELETE\n");
    await w.waitForOutput("wr/k\nb\nwr/k\n\n");
    await w.stop();
    expect(w.output()).toBe("PUT\nwr/k\na\nPUT\nwr/k\na\nwr/k\nb\nDELETE\nwr/k\nb\nwr/k\n\n");
  });

  it("watch -i: a progress request answers with the store's revision", async () => {
    const before = etcd.server.kv.synced.size;
    const w = watchProcess(["-i"]);
    w.write("watch progress/k\n");
    await waitFor(() => etcd.server.kv.synced.size === before + 1, "etcdctl's watch to be registered");
    await put("elsewhere", "moves the revision");
    w.write("progress\n");
    await w.waitForOutput(`progress notify: ${rev()}\n`);
    await w.stop();
  });

  it("compaction, and the errors etcdctl prints for compacted and future revisions", async () => {
    await put("c/k", "1");
    const old = rev();
    await put("c/k", "2");
    const at = rev();
    expect((await etcdctl(["compact", String(at)])).stdout).toBe(`compacted revision ${at}\n`);

    const [compacted, future, again, atCompaction] = await Promise.all([
      etcdctl(["get", "c/k", `--rev=${old}`]),
      etcdctl(["get", "c/k", `--rev=${at + 1000}`]),
      etcdctl(["compact", String(old)]),
      etcdctl(["get", "c/k", `--rev=${at}`]),
    ]);
    expect([compacted.code, lastError(compacted)]).toEqual([
      1,
      "Error: etcdserver: mvcc: required revision has been compacted",
    ]);
    expect([future.code, lastError(future)]).toEqual([
      1,
      "Error: etcdserver: mvcc: required revision is a future revision",
    ]);
    expect(lastError(again)).toBe("Error: etcdserver: mvcc: required revision has been compacted");
    expect(atCompaction.stdout).toBe("c/k\n2\n");

    const w = watchProcess(["c/k", `--rev=${old}`]);
    await w.exited;
    expect(w.output()).toContain(
      "watch was canceled (etcdserver: mvcc: required revision has been compacted)",
    );
  });

  it("lease grant, put --lease, timetolive --keys, keep-alive --once, list, revoke", async () => {
    const granted = await etcdctl(["lease", "grant", "60"]);
    const m = /^lease ([0-9a-f]{16}) granted with TTL\(60s\)\n$/.exec(granted.stdout);
    expect(m, granted.stdout + granted.stderr).not.toBeNull();
    const id = m![1];

    expect((await etcdctl(["put", "--lease", id, "l/k", "v"])).stdout).toBe("OK\n");
    const [ttl, keepAlive, list] = await Promise.all([
      etcdctl(["lease", "timetolive", id, "--keys"]),
      etcdctl(["lease", "keep-alive", "--once", id]),
      etcdctl(["lease", "list"]),
    ]);
    // Seconds pass between the grant and this answer: three etcdctl processes start in between,
    // slowly on a busy machine. Remaining is below the TTL by about that much, never above it.
    expect(ttl.stdout).toMatch(
      new RegExp(
        `^lease ${id} granted with TTL\\(60s\\), remaining\\((5[5-9]|60)s\\), attached keys\\(\\[l/k\\]\\)\n$`,
      ),
    );
    expect(keepAlive.stdout).toBe(`lease ${id} keepalived with TTL(60)\n`);
    expect(list.stdout).toContain(`${id}\n`);

    expect((await etcdctl(["lease", "revoke", id])).stdout).toBe(`lease ${id} revoked\n`);
    const [gone, expired, unknown] = await Promise.all([
      etcdctl(["get", "l/k"]),
      etcdctl(["lease", "timetolive", id]),
      etcdctl(["put", "--lease", "1234", "l/x", "v"]),
    ]);
    expect(gone.stdout).toBe("");
    expect(expired.stdout).toBe(`lease ${id} already expired\n`);
    expect([unknown.code, lastError(unknown)]).toEqual([1, "Error: etcdserver: requested lease not found"]);
  });

  it("endpoint status, endpoint health, member list", async () => {
    const [status, json, health, members] = await Promise.all([
      etcdctl(["endpoint", "status"]),
      etcdctl(["endpoint", "status", "-w", "json"]),
      etcdctl(["endpoint", "health"]),
      etcdctl(["member", "list"]),
    ]);
    expect(status.stdout).toMatch(
      new RegExp(
        `^${endpoint}, 8e9e05c52164694d, 3\\.5\\.17, \\d+ (B|kB), true, false, 2, ${rev()}, ${rev()}, \n$`,
      ),
    );
    expect(json.stdout).toContain(`"leader":10276657743932975437`);
    // etcdctl 3.4 prints the health line on stderr.
    expect(health.stdout + health.stderr).toMatch(
      new RegExp(`^${endpoint} is healthy: successfully committed proposal: took = `),
    );
    expect(members.stdout).toBe(
      `8e9e05c52164694d, started, default, http://localhost:2380, http://${endpoint}, false\n`,
    );
  });

  it("endpoint status --cluster: dials the advertised URL, whole URL as :authority (h2-authority.ts)", async () => {
    const [status, health] = await Promise.all([
      etcdctl(["endpoint", "status", "--cluster"]),
      etcdctl(["endpoint", "health", "--cluster"]),
    ]);
    expect([status.code, status.stderr]).toEqual([0, ""]);
    expect(status.stdout).toMatch(
      new RegExp(
        `^http://${endpoint}, 8e9e05c52164694d, 3\\.5\\.17, \\d+ (B|kB), true, false, 2, ${rev()}, ${rev()}, \n$`,
      ),
    );
    expect(health.code).toBe(0);
    expect(health.stdout + health.stderr).toMatch(
      new RegExp(`^http://${endpoint} is healthy: successfully committed proposal: took = `),
    );
  });

  it("a write over 1.5 MiB: etcd's 'request is too large'", async () => {
    const big = await etcdctl(["put", "big"], "a".repeat(1.6 * 1024 * 1024));
    expect([big.code, lastError(big)]).toEqual([1, "Error: etcdserver: request is too large"]);
  });
});
