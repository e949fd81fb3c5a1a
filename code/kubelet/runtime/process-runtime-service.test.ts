import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../testing/wait-for.ts";
import { ExecTimeoutError } from "../prober/probe/exec.ts";
import type { ContainerConfig, PodSandboxConfig } from "./cri.ts";
import { CodeExitError, isNotFound } from "./cri-errors.ts";
import { readPortMap } from "./network/pod-network.ts";
import { ProcessImageService } from "./process-image-service.ts";
import { ProcessRuntimeService } from "./process-runtime-service.ts";
import { type ContainerRecord, isSameProcess, processStartToken, readRecords } from "./process-state.ts";

// Real processes: every root dir made here is swept in afterEach — each recorded container's
// process group gets SIGKILL, whatever the test did — and afterAll checks none survived.
const roots: string[] = [];
const runtimes: ProcessRuntimeService[] = [];
const everyPid: { pid: number; token?: string }[] = [];
let images: ProcessImageService;
let imageRoot: string;

function recordsOf(root: string): ContainerRecord[] {
  return readRecords<ContainerRecord>(join(root, "containers"));
}

function killEverything(): void {
  for (const root of roots)
    for (const rec of recordsOf(root)) {
      if (rec.pid === undefined) continue;
      everyPid.push({ pid: rec.pid, token: rec.startToken });
      try {
        process.kill(-rec.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
}

beforeAll(async () => {
  imageRoot = mkdtempSync(join(tmpdir(), "process-images-"));
  images = new ProcessImageService(imageRoot);
  for (const image of [
    "course/web:1.0",
    "course/web",
    "course/sleeper",
    "course/worker",
    "course/crasher",
    "course/memhog",
    "course/echo",
    "busybox",
  ])
    await images.PullImage({ image });
}, 60_000);

const kubelets: ChildProcess[] = [];

afterEach(() => {
  for (const k of kubelets.splice(0)) if (k.exitCode === null && k.signalCode === null) k.kill("SIGKILL");
  killEverything();
  for (const rt of runtimes.splice(0)) rt.close();
});

/** Processes whose command line names one of this file's root dirs (containers, warm processes). */
function processesUnderRoots(): string[] {
  const ps = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return ps.split("\n").filter((l) => roots.some((r) => l.includes(r)));
}

afterAll(async () => {
  killEverything();
  await waitFor("no process under the test roots", async () => processesUnderRoots().length === 0, 10_000);
  // No process started here is left: each recorded pid is gone (or is another process by now).
  await waitFor(
    "every container process to be gone",
    async () => everyPid.every((p) => !isSameProcess(p.pid, p.token)),
    10_000,
  );
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  rmSync(imageRoot, { recursive: true, force: true });
});

function newRuntime(
  root = mkdtempSync(join(tmpdir(), "process-runtime-")),
  podCIDR = "10.244.1.0/24",
  warmPool = 0,
) {
  if (!roots.includes(root)) roots.push(root);
  const rt = new ProcessRuntimeService({ rootDir: root, images, podCIDR, nodeIP: "127.0.0.1", warmPool });
  runtimes.push(rt);
  return { rt, root };
}

function sandboxConfig(root: string, name: string, extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig {
  const uid = `uid-${name}`;
  return {
    metadata: { name, uid, namespace: "default", attempt: 0 },
    logDirectory: join(root, "pods-logs", `default_${name}_${uid}`),
    labels: { "io.kubernetes.pod.name": name },
    ...extra,
  };
}

function containerConfig(image: string, extra: Partial<ContainerConfig> = {}): ContainerConfig {
  return { metadata: { name: "app", attempt: 0 }, image: { image }, logPath: "app/0.log", ...extra };
}

/** A sandbox with one started container. */
async function runPod(rt: ProcessRuntimeService, root: string, name: string, config: ContainerConfig) {
  const sb = sandboxConfig(root, name);
  const podSandboxId = await rt.RunPodSandbox(sb);
  const containerId = await rt.CreateContainer(podSandboxId, config, sb);
  await rt.StartContainer(containerId);
  const ip = (await rt.PodSandboxStatus(podSandboxId)).network.ip;
  return { podSandboxId, containerId, ip };
}

async function exited(rt: ProcessRuntimeService, id: string, ms = 20_000) {
  return waitFor(
    `container ${id.slice(0, 8)} to exit`,
    async () => {
      const s = await rt.ContainerStatus(id);
      return s.state === "CONTAINER_EXITED" && s;
    },
    ms,
  );
}

/**
 * Whether `pid` still runs. A zombie does not: it has exited and waits for its parent (this test
 * process, which spawned it through the first runtime) to reap it, which a loaded machine delays.
 */
function pidAlive(pid: number): boolean {
  return processStartToken(pid) !== undefined;
}

describe("ProcessRuntimeService", () => {
  it("runs a container as a real process CREATED → RUNNING → EXITED, with a pod IP from the CIDR", async () => {
    const { rt, root } = newRuntime();
    const sb = sandboxConfig(root, "web-0");
    const podSandboxId = await rt.RunPodSandbox(sb);
    const sandbox = await rt.PodSandboxStatus(podSandboxId);
    expect(sandbox).toMatchObject({ state: "SANDBOX_READY", network: { ip: "10.244.1.2" } });
    expect(sandbox.id).toMatch(/^[0-9a-f]{64}$/);

    const id = await rt.CreateContainer(podSandboxId, containerConfig("course/web:1.0"), sb);
    expect(await rt.ContainerStatus(id)).toMatchObject({ state: "CONTAINER_CREATED", startedAt: 0 });
    expect((await rt.ContainerStatus(id)).imageRef).toMatch(/^sha256:[0-9a-f]{64}$/);

    await rt.StartContainer(id);
    const running = await rt.ContainerStatus(id);
    expect(running.state).toBe("CONTAINER_RUNNING");
    expect(running.startedAt).toBeGreaterThan(0);
    const pid = rt.pidOf(id) as number;
    expect(pidAlive(pid)).toBe(true);
    await expect(rt.StartContainer(id)).rejects.toThrow(
      `failed to set starting state for container "${id}": container is in CONTAINER_RUNNING state`,
    );

    // The web server answers at its pod IP's port, through the pod network's map.
    const target = await waitFor("web to listen", async () => rt.network.resolve("10.244.1.2", 8080));
    const res = await fetch(`http://${target.host}:${target.port}/`);
    expect(await res.text()).toContain("hello from web-0");

    await rt.StopContainer(id, 10);
    expect(await rt.ContainerStatus(id)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 0,
      reason: "Completed",
    });
    expect(pidAlive(pid)).toBe(false);
    // Its port entry went with it.
    expect(rt.network.resolve("10.244.1.2", 8080)).toBeUndefined();

    // Idempotent: stop again, remove twice; then the ids are gone.
    await rt.StopContainer(id, 10);
    await rt.RemoveContainer(id);
    await rt.RemoveContainer(id);
    expect(await rt.ListContainers()).toEqual([]);
    await rt.StopPodSandbox(podSandboxId);
    expect((await rt.PodSandboxStatus(podSandboxId)).state).toBe("SANDBOX_NOTREADY");
    await rt.RemovePodSandbox(podSandboxId);
    await rt.RemovePodSandbox(podSandboxId);
    expect(await rt.ListPodSandbox()).toEqual([]);
  }, 30_000);

  it("gives NotFound for ids it does not know, as containerd words it", async () => {
    const { rt, root } = newRuntime();
    const err = await rt.ContainerStatus("nope").catch((e) => e);
    expect(isNotFound(err)).toBe(true);
    expect(err.message).toBe(
      'rpc error: code = NotFound desc = an error occurred when try to find container "nope": not found',
    );
    await expect(rt.StopContainer("nope", 1)).rejects.toSatisfy(isNotFound);
    await expect(rt.StartContainer("nope")).rejects.toSatisfy(isNotFound);
    await expect(rt.PodSandboxStatus("nope")).rejects.toSatisfy(isNotFound);
    await expect(rt.StopPodSandbox("nope")).rejects.toSatisfy(isNotFound);
    await expect(
      rt.CreateContainer("nope", containerConfig("course/web"), sandboxConfig(root, "x")),
    ).rejects.toSatisfy(isNotFound);
    await expect(rt.ExecSync("nope", ["true"], 1000)).rejects.toSatisfy(isNotFound);
  });

  it("refuses an image that was not pulled, and an unknown image fails to pull with containerd's words", async () => {
    const { rt, root } = newRuntime();
    const sb = sandboxConfig(root, "x");
    const podSandboxId = await rt.RunPodSandbox(sb);
    await expect(rt.CreateContainer(podSandboxId, containerConfig("course/nope:1"), sb)).rejects.toSatisfy(
      isNotFound,
    );
    const err = await images.PullImage({ image: "course/nope" }).catch((e) => e);
    expect(isNotFound(err)).toBe(true);
    expect(err.desc).toBe(
      'failed to pull and unpack image "course/nope:latest": failed to resolve reference "course/nope:latest": course/nope:latest: not found',
    );
  });

  it("reports exit codes and reasons: Completed, Error, StartError for a command the image lacks", async () => {
    const { rt, root } = newRuntime();
    const ok = await runPod(rt, root, "job", containerConfig("course/worker", { args: ["--seconds", "0"] }));
    const bad = await runPod(
      rt,
      root,
      "crash",
      containerConfig("course/crasher", { args: ["--after", "0", "--exit-code", "3"] }),
    );
    expect(await exited(rt, ok.containerId)).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(await exited(rt, bad.containerId)).toMatchObject({ exitCode: 3, reason: "Error" });

    const sb = sandboxConfig(root, "typo");
    const sid = await rt.RunPodSandbox(sb);
    const id = await rt.CreateContainer(sid, containerConfig("course/web", { command: ["wbe"] }), sb);
    await expect(rt.StartContainer(id)).rejects.toThrow('exec: "wbe": executable file not found in $PATH');
    expect(await rt.ContainerStatus(id)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 128,
      reason: "StartError",
    });
  }, 30_000);

  it("stops gracefully: SIGTERM, and SIGKILL only when the timeout is up", async () => {
    const { rt, root } = newRuntime();
    const polite = await runPod(
      rt,
      root,
      "polite",
      containerConfig("course/sleeper", { args: ["--term-delay", "0.3"] }),
    );
    const stubborn = await runPod(
      rt,
      root,
      "stubborn",
      containerConfig("course/sleeper", { args: ["--ignore-sigterm"] }),
    );
    const logOf = (name: string) => join(root, "pods-logs", `default_${name}_uid-${name}`, "app", "0.log");
    // Wait until both programs run (their handlers are installed once they have logged).
    for (const name of ["polite", "stubborn"])
      await waitFor(`${name} to start`, async () => readFileSync(logOf(name), "utf8").includes("started"));

    await rt.StopContainer(polite.containerId, 30);
    // It shut down by itself, within the grace period: 143 is its own exit code, not SIGKILL's 137.
    expect(await rt.ContainerStatus(polite.containerId)).toMatchObject({ exitCode: 143, reason: "Error" });

    const t0 = Date.now();
    await rt.StopContainer(stubborn.containerId, 1);
    const s = await rt.ContainerStatus(stubborn.containerId);
    expect(s).toMatchObject({ state: "CONTAINER_EXITED", exitCode: 137, reason: "Error" });
    // The SIGKILL came no earlier than the timeout (a lower bound holds on any machine).
    expect(s.finishedAt / 1e6).toBeGreaterThanOrEqual(t0 + 1000 - 5);
    expect(readFileSync(logOf("stubborn"), "utf8")).toContain("sleeper: SIGTERM ignored");
  }, 30_000);

  it("writes both streams to the CRI log file, with full and partial lines", async () => {
    const { rt, root } = newRuntime();
    const crash = await runPod(
      rt,
      root,
      "crash",
      containerConfig("course/crasher", { args: ["--after", "0", "--exit-code", "2"] }),
    );
    const sh = await runPod(
      rt,
      root,
      "sh",
      containerConfig("busybox", { command: ["sh", "-c", "echo one; echo -n two"] }),
    );
    await exited(rt, crash.containerId);
    await exited(rt, sh.containerId);
    const status = await rt.ContainerStatus(crash.containerId);
    expect(status.logPath).toBe(join(root, "pods-logs", "default_crash_uid-crash", "app", "0.log"));
    const crashLines = readFileSync(status.logPath, "utf8").split("\n");
    const line = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (stdout|stderr) (F|P) (.*)$/;
    expect(crashLines.pop()).toBe(""); // every line ends with \n
    expect(crashLines.map((l) => line.exec(l)?.slice(1))).toEqual([
      ["stdout", "F", "crasher: started, exiting with 2 in 0 s"],
      ["stderr", "F", "crasher: something went wrong, exit 2"],
    ]);
    const shLines = readFileSync((await rt.ContainerStatus(sh.containerId)).logPath, "utf8")
      .trimEnd()
      .split("\n");
    expect(shLines.map((l) => line.exec(l)?.slice(1))).toEqual([
      ["stdout", "F", "one"],
      ["stdout", "P", "two"],
    ]);
  }, 30_000);

  it("passes command, args, env and workingDir; the container sees its own root", async () => {
    const { rt, root } = newRuntime();
    const echo = await runPod(
      rt,
      root,
      "echo",
      containerConfig("course/echo", {
        args: ["hi there", "--env=GREETING,HOSTNAME"],
        envs: [{ key: "GREETING", value: "hello" }],
      }),
    );
    await exited(rt, echo.containerId);
    const log = readFileSync((await rt.ContainerStatus(echo.containerId)).logPath, "utf8");
    expect(log).toMatch(/stdout F hi there\n.*stdout F GREETING=hello\n.*stdout F HOSTNAME=echo\n/);

    const box = await runPod(
      rt,
      root,
      "box",
      containerConfig("busybox", {
        command: ["sh", "-c", "touch here; sleep 600"],
        workingDir: "/work",
        envs: [{ key: "A", value: "1" }],
      }),
    );
    await waitFor(
      "touch to run",
      async () => (await rt.ExecSync(box.containerId, ["ls", "/work"], 5000)).stdout === "here\n",
    );
    const { stdout: env } = await rt.ExecSync(box.containerId, ["env"], 5000);
    expect(env).toContain("A=1\n");
    expect(env).toContain("HOSTNAME=box\n");
    expect(env).not.toContain("COURSE_SHIM");
    // Another container's root does not have the file.
    await expect(rt.ExecSync(echo.containerId, ["ls", "/work"], 5000)).rejects.toThrow(
      /is in CONTAINER_EXITED state/,
    );
    const other = await runPod(rt, root, "other", containerConfig("busybox", { command: ["sleep", "600"] }));
    await expect(rt.ExecSync(other.containerId, ["cat", "/work/here"], 5000)).rejects.toBeInstanceOf(
      CodeExitError,
    );
  }, 30_000);

  it("runs exec probes' commands: exit codes, a missing command (127) and a timeout", async () => {
    const { rt, root } = newRuntime();
    const { containerId } = await runPod(
      rt,
      root,
      "liveness-exec",
      containerConfig("busybox", { command: ["/bin/sh", "-c", "touch /tmp/healthy; sleep 600"] }),
    );
    await waitFor(
      "cat /tmp/healthy to succeed",
      async () => (await rt.ExecSync(containerId, ["cat", "/tmp/healthy"], 5000)) !== undefined,
    );
    await rt.ExecSync(containerId, ["rm", "-f", "/tmp/healthy"], 5000);
    const failed = await rt.ExecSync(containerId, ["cat", "/tmp/healthy"], 5000).catch((e) => e);
    expect(failed).toBeInstanceOf(CodeExitError);
    expect(failed).toMatchObject({
      exitCode: 1,
      stderr: "cat: can't open '/tmp/healthy': No such file or directory\n",
    });

    const missing = await rt.ExecSync(containerId, ["foo"], 5000).catch((e) => e);
    expect(missing).toBeInstanceOf(CodeExitError);
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr).toContain('exec: "foo": executable file not found in $PATH');

    const slow = await rt.ExecSync(containerId, ["sleep", "30"], 300).catch((e) => e);
    expect(slow).toBeInstanceOf(ExecTimeoutError);
    expect(slow.message).toBe('command "sleep 30" timed out');
  }, 30_000);

  it("streams an exec: stdin to stdout, and a tty with echo, \\r\\n and a prompt", async () => {
    const { rt, root } = newRuntime();
    const { containerId } = await runPod(
      rt,
      root,
      "box",
      containerConfig("busybox", { command: ["sleep", "600"] }),
    );
    const read = (s: NodeJS.ReadableStream) => {
      let out = "";
      s.setEncoding("utf8");
      s.on("data", (c: string) => {
        out += c;
      });
      return () => out;
    };

    const cat = await rt.Exec({ containerId, cmd: ["cat"], stdin: true, tty: false });
    const catOut = read(cat.stdout);
    cat.stdin?.end("a line\n");
    expect(await cat.exited).toBe(0);
    await waitFor("cat's output", async () => catOut() === "a line\n");

    const sh = await rt.Exec({ containerId, cmd: ["sh"], stdin: true, tty: true });
    expect(sh.stderr).toBeNull();
    const shOut = read(sh.stdout);
    sh.stdin?.write("echo hi\r");
    await waitFor("the shell's answer", async () => shOut().includes("hi\r\n/ # "));
    expect(shOut()).toContain("echo hi\r\n"); // the typed line was echoed
    sh.stdin?.write("\x04");
    expect(await sh.exited).toBe(0);

    const missing = await rt.Exec({ containerId, cmd: ["nope"], stdin: false, tty: false });
    expect(await missing.exited).toBe(127);
  }, 30_000);

  it("re-adopts running containers after the runtime is dropped, and reports those that exited meanwhile", async () => {
    const { rt: first, root } = newRuntime();
    const web = await runPod(first, root, "web", containerConfig("course/web"));
    const sleeper = await runPod(first, root, "sleeper", containerConfig("course/sleeper"));
    const job = await runPod(
      first,
      root,
      "job",
      containerConfig("course/worker", { args: ["--seconds", "1", "--exit-code", "4"] }),
    );
    const killed = await runPod(first, root, "killed", containerConfig("course/sleeper"));
    const webPid = first.pidOf(web.containerId) as number;
    const killedPid = first.pidOf(killed.containerId) as number;
    await waitFor("web to listen", async () => first.network.resolve(web.ip, 8080));
    first.close(); // the kubelet dies: nobody stops anything

    process.kill(-killedPid, "SIGKILL"); // dies while no runtime watches, leaving no exit status
    await waitFor("the killed container to be gone", async () => !pidAlive(killedPid));
    await waitFor("the job to finish", async () =>
      readFileSync(join(root, "containers", job.containerId, "exit.json"), "utf8"),
    );

    const { rt: second } = newRuntime(root);
    expect((await second.ContainerStatus(web.containerId)).state).toBe("CONTAINER_RUNNING");
    expect(second.pidOf(web.containerId)).toBe(webPid);
    expect(await second.ContainerStatus(job.containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 4,
      reason: "Error",
    });
    expect(await second.ContainerStatus(killed.containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 255,
      reason: "Unknown",
    });
    expect((await second.PodSandboxStatus(web.podSandboxId)).network.ip).toBe(web.ip);
    // The adopted web server still answers at its pod IP, and the new runtime can stop it.
    const target = second.network.resolve(web.ip, 8080);
    expect(target).toBeDefined();
    expect((await fetch(`http://${target?.host}:${target?.port}/healthz`)).status).toBe(200);
    await second.StopContainer(web.containerId, 10);
    expect(await second.ContainerStatus(web.containerId)).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(pidAlive(webPid)).toBe(false);
    // An adopted process that exits on its own is noticed too (sleeper: SIGTERM sent by hand).
    process.kill(first.pidOf(sleeper.containerId) ?? -1, "SIGTERM");
    expect(await exited(second, sleeper.containerId)).toMatchObject({ exitCode: 143 });
    // A new sandbox does not get an IP the first runtime gave out.
    const ips = new Set([web.ip, sleeper.ip, job.ip, killed.ip]);
    const fresh = await second.RunPodSandbox(sandboxConfig(root, "fresh"));
    expect(ips.has((await second.PodSandboxStatus(fresh)).network.ip)).toBe(false);
  }, 40_000);

  it("keeps a container running through a kill -9 of the process that started it", async () => {
    const root = mkdtempSync(join(tmpdir(), "process-runtime-"));
    roots.push(root);
    // A stand-in kubelet: another Node process that starts a container and then just waits.
    const script = `
      import { ProcessRuntimeService } from ${JSON.stringify(new URL("./process-runtime-service.ts", import.meta.url).pathname)};
      import { ProcessImageService } from ${JSON.stringify(new URL("./process-image-service.ts", import.meta.url).pathname)};
      const rt = new ProcessRuntimeService({ rootDir: process.argv[1], images: new ProcessImageService(${JSON.stringify(imageRoot)}), warmPool: 2 });
      const sb = { metadata: { name: "s", uid: "u", namespace: "default", attempt: 0 } };
      const sid = await rt.RunPodSandbox(sb);
      const id = await rt.CreateContainer(sid, { metadata: { name: "c", attempt: 0 }, image: { image: "course/sleeper" } }, sb);
      await rt.StartContainer(id);
      console.log(JSON.stringify({ id, pid: rt.pidOf(id) }));
      setInterval(() => {}, 1000);
    `;
    const kubelet = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, root], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    kubelets.push(kubelet);
    let out = "";
    kubelet.stdout?.setEncoding("utf8").on("data", (c: string) => {
      out += c;
    });
    const started = await waitFor(
      "the container to start",
      async () => out.includes("\n") && JSON.parse(out),
      30_000,
    );
    kubelet.kill("SIGKILL");
    await new Promise((r) => kubelet.once("exit", r));

    expect(pidAlive(started.pid)).toBe(true);
    // Its warm processes (not containers) notice their runtime is gone and exit.
    await waitFor("the dead kubelet's warm processes to exit", async () =>
      processesUnderRoots().every((l) => !l.includes(" -e")),
    );
    const { rt } = newRuntime(root);
    expect((await rt.ContainerStatus(started.id)).state).toBe("CONTAINER_RUNNING");
    await rt.StopContainer(started.id, 10);
    expect(await rt.ContainerStatus(started.id)).toMatchObject({ state: "CONTAINER_EXITED", exitCode: 143 });
  }, 40_000);

  it("starts containers from a warm pool just as cold ones: program, args, env, logs, ports, exit", async () => {
    const { rt, root } = newRuntime(undefined, "10.244.4.0/24", 2);
    // Each start below takes a ready warm process (counted by the runtime).
    const warmStart = async (name: string, config: ContainerConfig) => {
      await waitFor("a warm process", async () => rt.warmProcesses() > 0);
      const before = rt.warmStarts;
      const pod = await runPod(rt, root, name, config);
      expect(rt.warmStarts).toBe(before + 1);
      return pod;
    };
    const web = await warmStart(
      "warm-web",
      containerConfig("course/web", { args: ["--port=9090"], workingDir: "/srv" }),
    );
    const target = await waitFor("web to listen", async () => rt.network.resolve(web.ip, 9090));
    expect(await (await fetch(`http://${target.host}:${target.port}/`)).text()).toContain(
      "hello from warm-web",
    );
    await rt.ExecSync(web.containerId, ["touch", "/tmp/unhealthy"], 5000);
    expect((await fetch(`http://${target.host}:${target.port}/healthz`)).status).toBe(500);
    const echo = await warmStart(
      "warm-echo",
      containerConfig("course/echo", { args: ["hi", "--env=X"], envs: [{ key: "X", value: "1" }] }),
    );
    const crash = await warmStart(
      "warm-crash",
      containerConfig("course/crasher", { args: ["--after", "0", "--exit-code", "5"] }),
    );
    expect(await exited(rt, echo.containerId)).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(await exited(rt, crash.containerId)).toMatchObject({ exitCode: 5, reason: "Error" });
    expect(readFileSync((await rt.ContainerStatus(echo.containerId)).logPath, "utf8")).toMatch(
      /stdout F hi\n.*stdout F X=1\n/,
    );
    const { stdout: env } = await rt.ExecSync(web.containerId, ["env"], 5000);
    expect(env).not.toContain("COURSE_SHIM");
    await rt.StopContainer(web.containerId, 10);
    expect(await rt.ContainerStatus(web.containerId)).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(readFileSync((await rt.ContainerStatus(web.containerId)).logPath, "utf8")).toContain(
      "web: listening on :9090",
    );
  }, 40_000);

  it("does not adopt a recorded pid that now belongs to another process", async () => {
    const { rt: first, root } = newRuntime();
    const { containerId } = await runPod(
      first,
      root,
      "w",
      containerConfig("course/worker", { args: ["--seconds", "0"] }),
    );
    await exited(first, containerId);
    first.close();
    // Make the record claim the container runs as this (test) process — alive, but not it.
    const file = join(root, "containers", `${containerId}.json`);
    const rec = JSON.parse(readFileSync(file, "utf8")) as ContainerRecord;
    rec.status.state = "CONTAINER_RUNNING";
    rec.pid = process.pid;
    rec.startToken = "a-start-time-this-process-does-not-have";
    rmSync(join(root, "containers", containerId, "exit.json"));
    writeFileSync(file, JSON.stringify({ ...rec }));
    const { rt: second } = newRuntime(root);
    expect(await second.ContainerStatus(containerId)).toMatchObject({
      state: "CONTAINER_EXITED",
      exitCode: 255,
      reason: "Unknown",
    });
  }, 30_000);

  it("kills a container past its memory limit with reason OOMKilled", async () => {
    const { rt, root } = newRuntime();
    const { containerId } = await runPod(
      rt,
      root,
      "hog",
      containerConfig("course/memhog", { linux: { resources: { memoryLimitInBytes: 150 * 1024 * 1024 } } }),
    );
    expect(await exited(rt, containerId)).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
  }, 30_000);

  it("lets two pods listen on the same containerPort, each reachable at its own pod IP", async () => {
    const { rt, root } = newRuntime();
    const a = await runPod(rt, root, "web-a", containerConfig("course/web"));
    const b = await runPod(rt, root, "web-b", containerConfig("course/web", { args: ["--port", "8080"] }));
    expect(a.ip).not.toBe(b.ip);
    const ta = await waitFor("web-a to listen", async () => rt.network.resolve(a.ip, 8080));
    const tb = await waitFor("web-b to listen", async () => rt.network.resolve(b.ip, 8080));
    expect(ta.port).not.toBe(tb.port);
    expect(await (await fetch(`http://${ta.host}:${ta.port}/`)).text()).toContain("hello from web-a");
    expect(await (await fetch(`http://${tb.host}:${tb.port}/`)).text()).toContain("hello from web-b");
    // The same map, read from the root dir as a test or demo on this machine would.
    expect(
      readPortMap(join(root, "network"))
        .map((e) => `${e.podIP}:${e.containerPort}`)
        .sort(),
    ).toEqual([`${a.ip}:8080`, `${b.ip}:8080`].sort());
    // A hostNetwork pod has the node's IP and no mapping.
    const host = await rt.RunPodSandbox(sandboxConfig(root, "host", { hostNetwork: true }));
    expect((await rt.PodSandboxStatus(host)).network.ip).toBe("127.0.0.1");
  }, 30_000);

  it("never shares pod IPs or files between two runtimes with different root dirs", async () => {
    const one = newRuntime(undefined, "10.244.1.0/24");
    const two = newRuntime(undefined, "10.244.2.0/24");
    const a = await runPod(one.rt, one.root, "same-name", containerConfig("course/sleeper"));
    const b = await runPod(two.rt, two.root, "same-name", containerConfig("course/sleeper"));
    expect(a.ip).toBe("10.244.1.2");
    expect(b.ip).toBe("10.244.2.2");
    expect(a.containerId).not.toBe(b.containerId);
    await expect(one.rt.ContainerStatus(b.containerId)).rejects.toSatisfy(isNotFound);
    await one.rt.StopPodSandbox(a.podSandboxId);
    expect((await two.rt.ContainerStatus(b.containerId)).state).toBe("CONTAINER_RUNNING");
  }, 30_000);
});
