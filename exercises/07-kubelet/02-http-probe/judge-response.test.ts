// Exercise 7.2: your judgeHTTPResponse inside the course's real Prober
// (code/kubelet/prober/prober.ts), probing real HTTP servers on this machine: the pod's own server
// on 127.0.0.1, a second server on the same address and another port, and "another host" on
// localhost. What the kubelet sees is the probe's result and the events it records.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container, Pod, PodStatus } from "../../../code/api/core.ts";
import { Prober } from "../../../code/kubelet/prober/prober.ts";
import type { ProbeType } from "../../../code/kubelet/prober/worker.ts";
import { judgeHTTPResponse } from "./judge-response.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
interface TestServer {
  server: Server;
  port: number;
  /** Paths requested, in order. */
  hits: string[];
}

async function serve(host: string, handle: Handler): Promise<TestServer> {
  const t = { hits: [] as string[] } as TestServer;
  t.server = createServer((req, res) => {
    t.hits.push(req.url ?? "");
    handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    t.server.once("error", reject);
    t.server.listen(0, host, resolve);
  });
  t.port = (t.server.address() as AddressInfo).port;
  return t;
}

let pod: TestServer; // the container's server, at the pod IP 127.0.0.1
let otherPort: TestServer; // the same address, another port
let otherHost: TestServer; // another host name: localhost

beforeAll(async () => {
  otherHost = await serve("localhost", (_req, res) => res.writeHead(200).end("someone else's page"));
  otherPort = await serve("127.0.0.1", (_req, res) => res.writeHead(200).end("tls front door"));
  pod = await serve("127.0.0.1", (req, res) => {
    const redirect = (status: number, location: string) => res.writeHead(status, { location }).end("moved");
    const url = req.url ?? "";
    const chain = url.match(/^\/chain\/(\d+)$/);
    if (chain) {
      const n = Number(chain[1]);
      return n === 0 ? res.writeHead(200).end("end of chain") : redirect(302, `/chain/${n - 1}`);
    }
    const code = url.match(/^\/status\/(\d+)$/);
    if (code) return res.writeHead(Number(code[1])).end(`a page with status ${code[1]}`);
    switch (url) {
      case "/healthz":
        return res.writeHead(200).end("ok");
      case "/broken":
        return res.writeHead(500).end("stack trace with the database password");
      case "/moved":
        return redirect(301, "/healthz"); // relative: the same host
      case "/moved-to-broken":
        return redirect(307, `http://127.0.0.1:${pod.port}/broken`);
      case "/other-port":
        return redirect(308, `http://127.0.0.1:${otherPort.port}/healthz`);
      case "/login":
        return redirect(302, `http://localhost:${otherHost.port}/sso`);
      case "/loop":
        return redirect(302, "/loop");
      default:
        return res.writeHead(404).end("not found");
    }
  });
});

afterAll(async () => {
  for (const t of [pod, otherPort, otherHost]) {
    if (t) await new Promise((r) => t.server.close(r));
  }
});

/** Probes `path` of the pod's server once through the real Prober with your judgment. */
async function probe(path: string, probeType: ProbeType = "Liveness") {
  for (const t of [pod, otherPort, otherHost]) t.hits = [];
  const container: Container = {
    name: "web",
    image: "course/web",
    ports: [{ name: "http", containerPort: pod.port }],
  };
  const spec = { httpGet: { path, port: "http" }, timeoutSeconds: 10 };
  if (probeType === "Liveness") container.livenessProbe = spec;
  else if (probeType === "Readiness") container.readinessProbe = spec;
  else container.startupProbe = spec;
  const p: Pod = {
    metadata: { name: "web", namespace: "default", uid: "uid-web" },
    spec: { containers: [container] },
  };
  const status: PodStatus = { phase: "Running", podIP: "127.0.0.1" };
  const events: string[] = [];
  const prober = new Prober({
    execSync: () => async () => ({ exitCode: 0, stdout: "", stderr: "" }),
    recordEvent: (_pod, _c, type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    judgeHTTPResponse, // yours
  });
  const result = await prober.probe(probeType, p, status, container, "process://w1");
  return { result, events };
}

describe("statuses", () => {
  it("200 is a success, with no event", async () => {
    expect(await probe("/healthz")).toEqual({ result: "Success", events: [] });
  });

  it("the whole 2xx range is a success (204 No Content too)", async () => {
    expect(await probe("/status/204")).toEqual({ result: "Success", events: [] });
    expect(await probe("/status/299")).toEqual({ result: "Success", events: [] });
  });

  it("500: a failure whose event names the status — and never the body", async () => {
    const { result, events } = await probe("/broken");
    expect(result).toBe("Failure");
    expect(events).toEqual([
      "Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500",
    ]);
  });

  it("400 and 404 are failures too: the line is at 400", async () => {
    expect(await probe("/status/400")).toEqual({
      result: "Failure",
      events: ["Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 400"],
    });
    expect((await probe("/nothing-here")).events).toEqual([
      "Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 404",
    ]);
  });

  it("a 3xx that is no redirect to follow (300, 304, 399) is a success with a warning", async () => {
    for (const code of [300, 304, 399]) {
      const body = code === 304 ? "" : `a page with status ${code}`; // a 304 has no body
      expect(await probe(`/status/${code}`, "Readiness"), `status ${code}`).toEqual({
        result: "Success",
        events: [
          `Warning ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: ${body}`,
        ],
      });
    }
  });
});

describe("redirects", () => {
  it("a redirect on the same host is followed (a relative Location too): the final answer counts", async () => {
    expect(await probe("/moved")).toEqual({ result: "Success", events: [] });
    expect(pod.hits).toEqual(["/moved", "/healthz"]);
    const broken = await probe("/moved-to-broken");
    expect(broken.result).toBe("Failure");
    expect(broken.events).toEqual([
      "Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500",
    ]);
  });

  it("the same host name on another port is the same host: followed", async () => {
    expect(await probe("/other-port")).toEqual({ result: "Success", events: [] });
    expect(otherPort.hits).toEqual(["/healthz"]);
  });

  it("a redirect to another host is not followed: a success with a ProbeWarning, and the other host sees nothing", async () => {
    expect(await probe("/login", "Readiness")).toEqual({
      result: "Success",
      events: [
        "Warning ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: moved",
      ],
    });
    expect(otherHost.hits).toEqual([]);
  });

  it("9 redirects, then 200: a success after 10 requests", async () => {
    expect(await probe("/chain/9")).toEqual({ result: "Success", events: [] });
    expect(pod.hits).toHaveLength(10);
  });

  it("a redirect loop stops after 10 requests: a failure saying so", async () => {
    const { result, events } = await probe("/loop");
    expect(result).toBe("Failure");
    expect(events).toEqual([
      `Warning Unhealthy: Liveness probe failed: Get "http://127.0.0.1:${pod.port}/loop": stopped after 10 redirects`,
    ]);
    expect(pod.hits).toHaveLength(10);
  });
});
