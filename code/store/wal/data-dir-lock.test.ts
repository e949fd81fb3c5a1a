// One member per data directory: checked in process, then with real `etcd` processes — a second one
// refuses to start, and one killed with SIGKILL does not keep the next one out.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { acquireDataDirLock, DataDirLockError, lockPath } from "./data-dir-lock.ts";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const etcdCommand = join(repoRoot, "code/cmd/etcd.ts");

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "data-dir-lock-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return join(dir, "default.etcd");
}

function must<T>(x: T | DataDirLockError): T {
  if (x instanceof DataDirLockError) throw x;
  return x;
}

/** A pid that no process has: the highest pid Linux hands out is far below it. */
const deadPid = 2 ** 22 + 17;

describe("data-dir lock, in one process", () => {
  it("refuses a second holder until the first releases", async () => {
    const dataDir = await tempDataDir();
    const first = must(await acquireDataDirLock(dataDir));
    expect(await readFile(lockPath(dataDir), "utf8")).toMatch(
      new RegExp(`^pid ${process.pid} start \\d+\\n$`),
    );
    const second = await acquireDataDirLock(dataDir);
    expect(second).toBeInstanceOf(DataDirLockError);
    expect((second as Error).message).toBe(
      `the data directory ${dataDir} is in use by another etcd process (pid ${process.pid}): ` +
        "only one member may use a data directory at a time",
    );
    await first.release();
    await expect(stat(lockPath(dataDir))).rejects.toThrow(/ENOENT/);
    const third = must(await acquireDataDirLock(dataDir));
    await third.release();
  });

  it("takes over a lock whose owner is gone, or that it cannot read", async () => {
    const dataDir = await tempDataDir();
    await must(await acquireDataDirLock(dataDir)).release();
    for (const stale of [`pid ${deadPid} start 123\n`, `pid ${process.pid} start 1\n`, "garbage"]) {
      await writeFile(lockPath(dataDir), stale);
      const lock = must(await acquireDataDirLock(dataDir));
      expect(await readFile(lockPath(dataDir), "utf8")).toMatch(new RegExp(`^pid ${process.pid} `));
      await lock.release();
    }
  });

  it("a live process with the recorded start time holds it; the same pid started later does not", async () => {
    const dataDir = await tempDataDir();
    await must(await acquireDataDirLock(dataDir)).release();
    const stat1 = await readFile(`/proc/${process.ppid}/stat`, "utf8").catch(() => undefined);
    if (!stat1) return; // no /proc: nothing more to check here
    const start = stat1.slice(stat1.lastIndexOf(")") + 2).split(" ")[19];
    await writeFile(lockPath(dataDir), `pid ${process.ppid} start ${start}\n`);
    expect(await acquireDataDirLock(dataDir)).toBeInstanceOf(DataDirLockError);
    await writeFile(lockPath(dataDir), `pid ${process.ppid} start ${Number(start) + 1}\n`); // pid reused
    await must(await acquireDataDirLock(dataDir)).release();
  });
});

interface Member {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
  serving: Promise<void>;
}

function startMember(dataDir: string): Member {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      etcdCommand,
      `--data-dir=${dataDir}`,
      "--listen-client-urls=http://127.0.0.1:0",
      "--advertise-client-urls=http://127.0.0.1:0",
    ],
    { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  let stderr = "";
  const serving = new Promise<void>((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes("ready to serve client requests")) resolve();
    });
    child.on("close", () => reject(new Error(`etcd exited before serving:\n${stderr}`)));
  });
  serving.catch(() => {}); // a member expected to fail never serves
  return { child, exited, stderr: () => stderr, serving };
}

describe("data-dir lock, two etcd processes", () => {
  it("the second refuses to start while the first runs, and starts once the first was killed", async () => {
    const dataDir = await tempDataDir();
    const first = startMember(dataDir);
    await first.serving;

    const second = startMember(dataDir);
    expect(await second.exited).toEqual({ code: 1, signal: null });
    const errors = second
      .stderr()
      .split("\n")
      .filter((l) => l.includes('"level":"error"'));
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0]).error).toBe(
      `the data directory ${dataDir} is in use by another etcd process (pid ${first.child.pid}): ` +
        "only one member may use a data directory at a time",
    );
    expect(second.stderr()).not.toContain("recovered the store");

    // kill -9 leaves the lock file behind; its owner is gone, so the next member takes it over.
    first.child.kill("SIGKILL");
    await first.exited;
    expect(await readFile(lockPath(dataDir), "utf8")).toContain(`pid ${first.child.pid} `);
    const third = startMember(dataDir);
    await third.serving;
    expect(await readFile(lockPath(dataDir), "utf8")).toContain(`pid ${third.child.pid} `);

    // A clean stop releases it.
    third.child.kill("SIGTERM");
    expect(await third.exited).toEqual({ code: 0, signal: null });
    await expect(stat(lockPath(dataDir))).rejects.toThrow(/ENOENT/);
  }, 30_000);
});
