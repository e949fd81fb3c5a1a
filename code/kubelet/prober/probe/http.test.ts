import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container, HTTPGetAction } from "../../../api/core.ts";
import { freePort } from "../../../testing/ports.ts";
import { doHTTPProbe, maxRespBodyLength, newRequestForHTTPGetAction } from "./http.ts";

let server: Server;
let port: number;
let seen: { path: string; headers: IncomingHttpHeaders }[] = [];
const hanging = new Set<import("node:http").ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    const to = (status: number, location: string) => res.writeHead(status, { location }).end("moved");
    switch (req.url) {
      case "/ok":
        return res.writeHead(200).end("ok body");
      case "/nocontent":
        return res.writeHead(204).end();
      case "/fail":
        return res.writeHead(500).end("the page's secret content");
      case "/same-host":
        return to(301, "/ok");
      case "/same-host-to-fail":
        return to(307, `http://127.0.0.1:${port}/fail`);
      case "/other-host":
        return to(302, `http://localhost:${port}/ok`);
      case "/loop":
        return to(302, "/loop");
      case "/big":
        res.writeHead(200);
        return res.end("x".repeat(1024 * 1024));
      case "/slow":
        hanging.add(res); // answers only when the test ends
        return;
      default:
        return res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise((r) => server.close(r));
});

const container: Container = { name: "app", ports: [{ name: "http", containerPort: 8080 }] };
const action = (path: string, extra: Partial<HTTPGetAction> = {}): HTTPGetAction => ({
  path,
  port,
  ...extra,
});
const probe = (path: string, extra: Partial<HTTPGetAction> = {}, timeoutMs = 10_000) =>
  doHTTPProbe(newRequestForHTTPGetAction(action(path, extra), container, "127.0.0.1"), timeoutMs);

describe("newRequestForHTTPGetAction", () => {
  it("builds the URL from scheme, host (else the pod IP), a named or numbered port and the path", () => {
    const r = newRequestForHTTPGetAction(
      { path: "/healthz?x=1", port: "http", scheme: "HTTPS" },
      container,
      "10.1.2.3",
    );
    expect(r.url.href).toBe("https://10.1.2.3:8080/healthz?x=1");
    expect(newRequestForHTTPGetAction({ port: 81, host: "fd00::1" }, container, "10.1.2.3").url.href).toBe(
      "http://[fd00::1]:81/",
    );
  });

  it("rejects a port that does not resolve, with upstream's text", () => {
    expect(() => newRequestForHTTPGetAction({ port: "metrics" }, container, "10.1.2.3")).toThrow(
      'port "metrics" not found',
    );
    expect(() => newRequestForHTTPGetAction({ port: 70000 }, container, "10.1.2.3")).toThrow(
      "invalid port number: 70000",
    );
  });

  it("sets User-Agent and Accept unless the probe does; an empty Accept sends none", () => {
    const plain = newRequestForHTTPGetAction({ port: 80 }, container, "10.0.0.1").headers;
    expect(plain.get("User-Agent")).toEqual(["kube-probe/1.32"]);
    expect(plain.get("Accept")).toEqual(["*/*"]);
    const own = newRequestForHTTPGetAction(
      {
        port: 80,
        httpHeaders: [
          { name: "user-agent", value: "mine" },
          { name: "Accept", value: "" },
        ],
      },
      container,
      "10.0.0.1",
    ).headers;
    expect(own.get("User-Agent")).toEqual(["mine"]);
    expect(own.has("Accept")).toBe(false);
  });
});

describe("doHTTPProbe against a local server", () => {
  it("is a success for 2xx, with the body as output, and sends the probe's headers", async () => {
    seen = [];
    expect(await probe("/ok", { httpHeaders: [{ name: "X-Probe", value: "1" }] })).toEqual({
      result: "success",
      output: "ok body",
    });
    expect(await probe("/nocontent")).toEqual({ result: "success", output: "" });
    expect(seen[0].headers["user-agent"]).toBe("kube-probe/1.32");
    expect(seen[0].headers.accept).toBe("*/*");
    expect(seen[0].headers["x-probe"]).toBe("1");
  });

  it("sends a Host header the probe sets instead of the URL's", async () => {
    seen = [];
    await probe("/ok", { httpHeaders: [{ name: "Host", value: "example.test" }] });
    expect(seen[0].headers.host).toBe("example.test");
  });

  it("is a failure for 500 whose text is the status, never the body", async () => {
    expect(await probe("/fail")).toEqual({
      result: "failure",
      output: "HTTP probe failed with statuscode: 500",
    });
  });

  it("follows a redirect to the same host and judges where it lands", async () => {
    seen = [];
    expect(await probe("/same-host")).toEqual({ result: "success", output: "ok body" });
    expect(seen.map((s) => s.path)).toEqual(["/same-host", "/ok"]);
    expect(await probe("/same-host-to-fail")).toEqual({
      result: "failure",
      output: "HTTP probe failed with statuscode: 500",
    });
  });

  it("stops at a redirect to another host: a warning, the redirect not followed", async () => {
    seen = [];
    expect(await probe("/other-host")).toEqual({
      result: "warning",
      output: "Probe terminated redirects, Response body: moved",
    });
    expect(seen.map((s) => s.path)).toEqual(["/other-host"]);
  });

  it("gives up after 10 requests of redirects on one host", async () => {
    seen = [];
    expect(await probe("/loop")).toEqual({
      result: "failure",
      output: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`,
    });
    expect(seen.length).toBe(10);
  });

  it("reads at most 10 KiB of a body and still judges by the status", async () => {
    const out = await probe("/big");
    expect(out.result).toBe("success");
    expect(out.output.length).toBe(maxRespBodyLength);
  });

  it("is a failure with Go's text when the connection is refused", async () => {
    const closed = await freePort();
    const req = newRequestForHTTPGetAction({ path: "/", port: closed }, container, "127.0.0.1");
    expect(await doHTTPProbe(req, 10_000)).toEqual({
      result: "failure",
      output: `Get "http://127.0.0.1:${closed}/": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
  });

  it("is a failure when the server does not answer within the timeout", async () => {
    expect(await probe("/slow", {}, 200)).toEqual({
      result: "failure",
      output: `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
  });
});

describe("through the pod network (a dial)", () => {
  const podIP = "10.244.1.7";
  const action = (path: string): HTTPGetAction => ({ path, port: 8080 });
  const container = { name: "web" } as Container;

  it("connects where the pod really listens, and names the pod's address as Host and in messages", async () => {
    seen = [];
    const dial = (host: string, p: number) =>
      host === podIP && p === 8080 ? { host: "127.0.0.1", port } : undefined;
    const ok = await doHTTPProbe(
      { ...newRequestForHTTPGetAction(action("/ok"), container, podIP), dial },
      1000,
    );
    expect(ok.result).toBe("success");
    expect(seen[0].headers.host).toBe(`${podIP}:8080`);
    // A same-host redirect stays on the pod network.
    const moved = await doHTTPProbe(
      { ...newRequestForHTTPGetAction(action("/same-host"), container, podIP), dial },
      1000,
    );
    expect(moved.result).toBe("success");
    expect(seen.map((s) => s.path)).toEqual(["/ok", "/same-host", "/ok"]);
    const fail = await doHTTPProbe(
      { ...newRequestForHTTPGetAction(action("/fail"), container, podIP), dial },
      1000,
    );
    expect(fail.output).toBe("HTTP probe failed with statuscode: 500");
  });

  it("an address nothing listens on is refused, in a real pod IP's words", async () => {
    const out = await doHTTPProbe(
      { ...newRequestForHTTPGetAction(action("/ok"), container, podIP), dial: () => undefined },
      1000,
    );
    expect(out).toEqual({
      result: "failure",
      output: `Get "http://${podIP}:8080/ok": dial tcp ${podIP}:8080: connect: connection refused`,
    });
  });
});
