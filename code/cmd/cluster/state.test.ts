/**
 * cluster.json as the cluster's lock and record: a live supervisor keeps it, a dead one's file is
 * stale and its recorded processes are killed — only those that are still the recorded process
 * (pid and start token), containers included — and the subcommands that read it from another
 * terminal answer in one line when there is no cluster.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { processStartToken } from "../../kubelet/runtime/process-state.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { run as down } from "./down.ts";
import type { Output } from "./start.ts";
import {
  acquireState,
  type ClusterState,
  type ComponentState,
  liveRecordedPids,
  newState,
  readState,
  supervisorAlive,
  writeState,
} from "./state.ts";
import { run as status } from "./status.ts";
import { run as stop } from "./stop.ts";

const started: ChildProcess[] = [];
const dirs: string[] = [];

/** A `sleep` in its own process group, as a component or a container would be; killed in afterAll. */
function sleeper(): { pid: number; token: string } {
  const child = spawn("sleep", ["120"], { detached: true, stdio: "ignore" });
  started.push(child);
  const pid = child.pid!;
  return { pid, token: processStartToken(pid)! };
}

const running = (pid: number) => processStartToken(pid) !== undefined;

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "cluster-state-"));
  dirs.push(d);
  return d;
}

function component(name: string, p: { pid: number; token: string }): ComponentState {
  return { name, kind: "kubelet", pid: p.pid, startToken: p.token, log: "/dev/null", args: ["sleep", "120"] };
}

function buffer(): Output & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => lines.push(l), err: (l) => lines.push(l), write: () => {}, tty: false };
}

afterEach(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("cluster.json", () => {
  it("is replaced whole and read back; no temp file is left", () => {
    const dir = tempDir();
    const s = newState(dir, "https://127.0.0.1:1", join(dir, "pki", "admin.kubeconfig"));
    writeState(s);
    writeState({ ...s, server: "https://127.0.0.1:2" });
    expect(readState(dir)).toEqual({ ...s, server: "https://127.0.0.1:2" });
    expect(readdirSync(dir)).toEqual(["cluster.json"]);
  });

  it("is the lock: a second supervisor is refused while the first runs, and told who it is", () => {
    const dir = tempDir();
    const first = newState(dir, "", "");
    expect(acquireState(first)).toEqual({ ok: true, stale: undefined });
    expect(supervisorAlive(first)).toBe(true); // this test process
    const second = { ...newState(dir, "", ""), startedAt: "later" };
    const again = acquireState(second);
    expect(again.ok).toBe(false);
    expect(again.ok === false && again.running.startedAt).toBe(first.startedAt);
  });

  it("of a dead supervisor is stale: its recorded processes and containers are killed, a reused pid is not", async () => {
    const dir = tempDir();
    const supervisor = sleeper();
    const etcd = sleeper();
    const kubelet = sleeper();
    const stranger = sleeper(); // a process now holding a pid the state records with another start token
    const container = sleeper();
    const rootDir = join(dir, "kubelets", "node-1");
    mkdirSync(join(rootDir, "runtime", "containers"), { recursive: true });
    writeFileSync(
      join(rootDir, "runtime", "containers", "c1.json"),
      JSON.stringify({
        status: { id: "c1" },
        config: {},
        env: {},
        pid: container.pid,
        startToken: container.token,
      }),
    );
    const stale: ClusterState = {
      ...newState(dir, "", ""),
      supervisorPid: supervisor.pid,
      supervisorStartToken: supervisor.token,
      components: [
        component("etcd", etcd),
        component("kubelet-node-1", kubelet),
        component("kube-scheduler", { pid: stranger.pid, token: "not-its-start-time" }),
      ],
      kubeletRootDirs: [rootDir],
    };
    writeState(stale);
    expect(liveRecordedPids(stale).sort()).toEqual([etcd.pid, kubelet.pid, container.pid].sort());
    process.kill(supervisor.pid, "SIGKILL");
    await waitFor("the supervisor to be gone", async () => !running(supervisor.pid));

    const taken = acquireState(newState(dir, "", ""));
    expect(taken.ok).toBe(true);
    expect(taken.ok && taken.stale?.supervisorPid).toBe(supervisor.pid);
    expect(taken.ok && taken.stale?.killed.sort()).toEqual([etcd.pid, kubelet.pid, container.pid].sort());
    await waitFor("the recorded processes to be gone", async () =>
      [etcd, kubelet, container].every((p) => !running(p.pid)),
    );
    expect(running(stranger.pid)).toBe(true);
    expect(readState(dir)?.supervisorPid).toBe(process.pid);
  });
});

describe("status, stop and down from another terminal", () => {
  it("status with no cluster says how to start one and exits 1", async () => {
    const dir = tempDir();
    const io = buffer();
    expect(await status(["--dir", dir], io)).toBe(1);
    expect(io.lines).toEqual([`no cluster is running in ${dir}: start one with \`npm run cluster\``]);
  });

  it("status of a stale state says the supervisor is gone and exits 1", async () => {
    const dir = tempDir();
    const gone = sleeper();
    process.kill(gone.pid, "SIGKILL");
    await waitFor("the sleeper to be gone", async () => !running(gone.pid));
    writeState({ ...newState(dir, "", ""), supervisorPid: gone.pid, supervisorStartToken: gone.token });
    const io = buffer();
    expect(await status(["--dir", dir], io)).toBe(1);
    expect(io.lines[0]).toContain(`its supervisor (pid ${gone.pid}) is gone`);
  });

  it("stop of a dead supervisor's cluster kills what it recorded and removes cluster.json", async () => {
    const dir = tempDir();
    const gone = sleeper();
    const apiserver = sleeper();
    process.kill(gone.pid, "SIGKILL");
    await waitFor("the sleeper to be gone", async () => !running(gone.pid));
    writeState({
      ...newState(dir, "", ""),
      supervisorPid: gone.pid,
      supervisorStartToken: gone.token,
      components: [component("kube-apiserver", apiserver)],
    });
    const io = buffer();
    expect(await stop(["--dir", dir], io)).toBe(0);
    expect(io.lines).toContain("killed 1 leftover processes");
    expect(running(apiserver.pid)).toBe(false);
    expect(existsSync(join(dir, "cluster.json"))).toBe(false);
  });

  it("down refuses a directory that is not a cluster's, and removes one that is", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "notes.txt"), "mine");
    const io = buffer();
    expect(await down(["--dir", dir], io)).toBe(1);
    expect(io.lines[0]).toContain("does not look like a cluster directory");
    expect(existsSync(join(dir, "notes.txt"))).toBe(true);
    mkdirSync(join(dir, "logs"));
    expect(await down(["--dir", dir], buffer())).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });
});
