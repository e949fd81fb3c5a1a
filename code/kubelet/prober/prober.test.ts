import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container, Pod, PodStatus, Probe } from "../../api/core.ts";
import { freePort } from "../../testing/ports.ts";
import type { ExecSync } from "./probe/exec.ts";
import { maxProbeRetries, Prober } from "./prober.ts";

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/healthz") return res.writeHead(200).end("ok");
    if (req.url === "/moved")
      return res.writeHead(302, { location: `http://localhost:${port}/healthz` }).end("bye");
    return res.writeHead(500).end("boom");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => server.close(r)));

const pod: Pod = { metadata: { name: "web", namespace: "default", uid: "u1" }, spec: { containers: [] } };
const status: PodStatus = { podIP: "127.0.0.1" };

function setup(execSync: ExecSync = async () => ({ exitCode: 0, stdout: "", stderr: "" })) {
  const events: string[] = [];
  const execCalls: string[] = [];
  const prober = new Prober({
    execSync: (id) => {
      execCalls.push(id);
      return execSync;
    },
    recordEvent: (_p, c, type, reason, message) => events.push(`${c.name} ${type} ${reason}: ${message}`),
  });
  return { prober, events, execCalls };
}
const withProbe = (field: "livenessProbe" | "readinessProbe" | "startupProbe", probe: Probe): Container => ({
  name: "app",
  ports: [{ name: "http", containerPort: port }],
  [field]: probe,
});

describe("Prober.probe", () => {
  it("a passing httpGet on the pod IP and a named port is Success, with no event", async () => {
    const t = setup();
    const c = withProbe("readinessProbe", { httpGet: { path: "/healthz", port: "http" } });
    expect(await t.prober.probe("Readiness", pod, status, c, "containerd://1")).toBe("Success");
    expect(t.events).toEqual([]);
  });

  it("a failing probe is Failure with upstream's Unhealthy event", async () => {
    const t = setup();
    const c = withProbe("livenessProbe", { httpGet: { path: "/broken", port } });
    expect(await t.prober.probe("Liveness", pod, status, c, "containerd://1")).toBe("Failure");
    expect(t.events).toEqual([
      "app Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500",
    ]);
  });

  it("a redirect to another host is Success with a ProbeWarning event", async () => {
    const t = setup();
    const c = withProbe("readinessProbe", { httpGet: { path: "/moved", port } });
    expect(await t.prober.probe("Readiness", pod, status, c, "containerd://1")).toBe("Success");
    expect(t.events).toEqual([
      "app Warning ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: bye",
    ]);
  });

  it("tcpSocket: refused is Failure with the dial text", async () => {
    const t = setup();
    const closed = await freePort();
    const c = withProbe("startupProbe", { tcpSocket: { port: closed } });
    expect(await t.prober.probe("Startup", pod, status, c, "containerd://1")).toBe("Failure");
    expect(t.events).toEqual([
      `app Warning Unhealthy: Startup probe failed: dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    ]);
  });

  it("exec runs in the probed container through the runtime", async () => {
    const t = setup(async () => ({ exitCode: 1, stdout: "", stderr: "not ready\n" }));
    const c = withProbe("readinessProbe", { exec: { command: ["check"] } });
    expect(await t.prober.probe("Readiness", pod, status, c, "containerd://abc")).toBe("Failure");
    expect(t.execCalls).toEqual(["containerd://abc"]);
    expect(t.events).toEqual(["app Warning Unhealthy: Readiness probe failed: not ready\n"]);
  });

  it("a probe that cannot run is retried, reported as errored, and rejected so the worker discards it", async () => {
    let calls = 0;
    const t = setup(async () => {
      calls++;
      throw new Error("container is not running");
    });
    const c = withProbe("livenessProbe", { exec: { command: ["check"] } });
    await expect(t.prober.probe("Liveness", pod, status, c, "containerd://1")).rejects.toThrow(
      "container is not running",
    );
    expect(calls).toBe(maxProbeRetries);
    expect(t.events).toEqual(["app Warning Unhealthy: Liveness probe errored: container is not running"]);
  });

  it("a port name the container does not have errors with upstream's text", async () => {
    const t = setup();
    const c = withProbe("livenessProbe", { tcpSocket: { port: "admin" } });
    await expect(t.prober.probe("Liveness", pod, status, c, "containerd://1")).rejects.toThrow(
      'port "admin" not found',
    );
  });

  it("a container without that probe type is Success", async () => {
    const t = setup();
    expect(await t.prober.probe("Liveness", pod, status, { name: "app" }, "containerd://1")).toBe("Success");
  });
});
