/**
 * Process-runtime start benchmark — what one container costs: StartContainer → its port accepts
 * (a course/web container), with the image run through tsx and from a prebuilt bundle, and the
 * resident memory (RSS) of one idle container.
 *
 * How, and why so:
 * - One ProcessRuntimeService per mode over a fresh root dir, images pulled first (pull time is
 *   not start time: upstream's pod-startup SLO excludes image pulls too).
 * - `--starts` (20) containers one after another per mode: the time from the StartContainer call
 *   until a TCP connect to the container's mapped port succeeds (the port map is polled every
 *   5 ms, so a figure can be up to 5 ms late). Modes: `tsx` (the image's TypeScript compiled at
 *   start), `bundle` (the pulled bundle, a fresh Node process), `warm` (the bundle in a process of
 *   a warm pool of 2, taken once one is ready).
 * - Then `--burst` (33, a third of 100 pods: one of three kubelets' share) containers started at
 *   once, cold (bundle) and warm (a pool of `--burst` processes, all ready first) — the start cost
 *   when the two cores are shared, which is what the kubelet benchmark's p99 meets.
 * - RSS from /proc/<pid>/status (VmRSS) of each bundle-mode container once it listens (Linux only;
 *   left out elsewhere).
 * - The load average is printed with the figures: on a shared machine they move with it.
 * Flags: --starts N, --burst N, --quick (3 starts, burst 5), --json.
 *
 * @upstream kubernetes/kubernetes test/e2e_node/density_test.go (the role: pod start latency on one node)
 * @chapter 07-kubelet
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { sizeFlag } from "../../../testing/bench-flags.ts";
import { progress, runBenchmark, trackTempDir } from "../../../testing/child-process.ts";
import { summary } from "../../../testing/percentile.ts";
import type { PodSandboxConfig } from "../cri.ts";
import { type ImageMode, ProcessImageService } from "../process-image-service.ts";
import { ProcessRuntimeService } from "../process-runtime-service.ts";

const json = process.argv.includes("--json");
const starts = sizeFlag("starts", 20, 3);
const burst = sizeFlag("burst", 33, 5);
const runtimes: ProcessRuntimeService[] = [];

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

function rssBytes(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

async function setup(mode: ImageMode, warmPool = 0) {
  const root = trackTempDir(mkdtempSync(join(tmpdir(), `process-start-${mode}-`)));
  const images = new ProcessImageService(join(root, "images"), mode);
  await images.PullImage({ image: "course/web:1.0" });
  const rt = new ProcessRuntimeService({
    rootDir: join(root, "runtime"),
    images,
    podCIDR: "10.244.7.0/24",
    warmPool,
  });
  runtimes.push(rt);
  return { rt, root };
}

/** Waits until the runtime's warm pool has `n` processes ready. */
async function untilWarm(rt: ProcessRuntimeService, n: number): Promise<void> {
  while (rt.warmProcesses() < n) await new Promise((r) => setTimeout(r, 10));
}

let seq = 0;
/** Creates a pod and a web container, then measures StartContainer → port accepting. */
async function startOne(rt: ProcessRuntimeService, root: string) {
  const name = `web-${seq++}`;
  const sb: PodSandboxConfig = {
    metadata: { name, uid: name, namespace: "bench", attempt: 0 },
    logDirectory: join(root, "logs", name),
  };
  const sandboxId = await rt.RunPodSandbox(sb);
  const ip = (await rt.PodSandboxStatus(sandboxId)).network.ip;
  const id = await rt.CreateContainer(
    sandboxId,
    { metadata: { name: "web", attempt: 0 }, image: { image: "course/web:1.0" }, logPath: "web/0.log" },
    sb,
  );
  const t0 = performance.now();
  await rt.StartContainer(id);
  for (;;) {
    const target = rt.network.resolve(ip, 8080);
    if (target && (await canConnect(target.host, target.port))) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { ms: performance.now() - t0, pid: rt.pidOf(id) as number, sandboxId };
}

async function stopAll(rt: ProcessRuntimeService) {
  await Promise.all((await rt.ListPodSandbox()).map((s) => rt.RemovePodSandbox(s.id)));
}

runBenchmark("process-start", async () => {
  process.on("exit", () => {
    // The benchmark's containers are detached (their own process groups): kill them on any exit.
    for (const rt of runtimes)
      for (const pid of rt.runningPids())
        try {
          process.kill(-pid, "SIGKILL");
        } catch {}
  });
  const result: Record<string, unknown> = { loadavgBefore: loadavg().map((l) => Number(l.toFixed(2))) };
  for (const mode of ["tsx", "bundle", "warm"] as const) {
    const { rt, root } = await setup(mode === "warm" ? "bundle" : mode, mode === "warm" ? 2 : 0);
    await startOne(rt, root); // warm-up: the shim's build and the file cache
    await stopAll(rt);
    const ms: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < starts; i++) {
      if (mode === "warm") await untilWarm(rt, 1);
      const r = await startOne(rt, root);
      ms.push(r.ms);
      await new Promise((res) => setTimeout(res, 200)); // idle a moment, then weigh it
      const b = rssBytes(r.pid);
      if (b !== undefined) rss.push(b);
      await stopAll(rt);
      progress(`${mode}: start ${i + 1}/${starts} ${r.ms.toFixed(0)} ms`);
    }
    result[mode] = {
      startMs: summary(ms, 1),
      rssMiB: rss.length
        ? summary(
            rss.map((b) => b / 2 ** 20),
            1,
          )
        : undefined,
    };
  }
  for (const kind of ["burst", "warmBurst"] as const) {
    const { rt, root } = await setup("bundle", kind === "warmBurst" ? burst : 0);
    if (kind === "warmBurst") await untilWarm(rt, burst);
    progress(`${kind}: ${burst} containers at once`);
    const all = await Promise.all(Array.from({ length: burst }, () => startOne(rt, root)));
    const rssAll = all.map((r) => rssBytes(r.pid)).filter((b): b is number => b !== undefined);
    result[kind] = {
      startMs: summary(
        all.map((r) => r.ms),
        1,
      ),
      warmStarts: rt.warmStarts,
      rssMiBTotal: rssAll.length ? rssAll.reduce((a, b) => a + b, 0) / 2 ** 20 : undefined,
    };
    await stopAll(rt);
    rt.close();
  }
  result.loadavgAfter = loadavg().map((l) => Number(l.toFixed(2)));
  for (const r of runtimes) r.close();
  if (json) {
    console.log(JSON.stringify(result));
    return;
  }
  const fmt = (s: { p50: number; p90: number; p99: number; max: number; n: number }) =>
    `p50 ${s.p50.toFixed(0)} ms  p90 ${s.p90.toFixed(0)} ms  p99 ${s.p99.toFixed(0)} ms  max ${s.max.toFixed(0)} ms  (n=${s.n})`;
  for (const mode of ["tsx", "bundle", "warm"]) {
    const r = result[mode] as { startMs: ReturnType<typeof summary>; rssMiB?: ReturnType<typeof summary> };
    console.log(`${mode.padEnd(7)} StartContainer → port accepting: ${fmt(r.startMs)}`);
    if (r.rssMiB)
      console.log(
        `${"".padEnd(7)} RSS per idle container: p50 ${r.rssMiB.p50.toFixed(1)} MiB, max ${r.rssMiB.max.toFixed(1)} MiB`,
      );
  }
  for (const kind of ["burst", "warmBurst"]) {
    const b = result[kind] as {
      startMs: ReturnType<typeof summary>;
      rssMiBTotal?: number;
      warmStarts: number;
    };
    console.log(
      `${kind === "burst" ? "burst  " : "warm   "} ${burst} at once: ${fmt(b.startMs)}  warm starts ${b.warmStarts}`,
    );
    if (b.rssMiBTotal) console.log(`        RSS of the ${burst}: ${b.rssMiBTotal.toFixed(0)} MiB`);
  }
  console.log(`load average before ${result.loadavgBefore}, after ${result.loadavgAfter}`);
});
