import { createServer, get, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { anyRequest, FaultProxy, isContinue, isList, isWatch } from "./fault-proxy.ts";

/** An upstream that answers `hello <path>`, and streams `tick` lines forever for `?watch=true`. */
let upstream: Server;
let upstreamURL: string;
let proxy: FaultProxy;
const hits: string[] = [];

beforeEach(async () => {
  hits.length = 0;
  upstream = createServer((req, res) => {
    hits.push(req.url ?? "");
    if (req.url?.includes("watch=true")) {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write("tick\n");
      return; // left open: a watch
    }
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end(`hello ${req.url}`);
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", () => r()));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await FaultProxy.start(upstreamURL);
});

afterEach(async () => {
  await proxy.close();
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
});

/** GET through the proxy: the status, headers and whole body — or the error that broke it. */
function fetchRaw(
  path: string,
): Promise<{ code: number; retryAfter?: string; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = get(`${proxy.url}${path}`, { agent: false }, (res: IncomingMessage) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () =>
        resolve({ code: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string, body }),
      );
      res.on("aborted", () => resolve({ error: `aborted after ${JSON.stringify(body)}` }));
      res.on("error", () => resolve({ error: `broken after ${JSON.stringify(body)}` }));
    });
    req.on("error", (e) => resolve({ error: e.message }));
  });
}

/** Opens a watch through the proxy and resolves with its response once the first line came. */
function openWatch(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(`${proxy.url}/w?watch=true`, { agent: false }, (res) =>
      res.once("data", () => resolve(res)),
    );
    req.on("error", reject);
  });
}

describe("FaultProxy", () => {
  it("passes requests through untouched while no fault is queued", async () => {
    expect(await fetchRaw("/a?x=1")).toEqual({ code: 200, retryAfter: undefined, body: "hello /a?x=1" });
    expect(proxy.log).toEqual([{ method: "GET", url: "/a?x=1", code: 200 }]);
  });

  it("answers a queued status itself, as a Kubernetes Status with Retry-After, once", async () => {
    proxy.inject(anyRequest, { kind: "status", code: 429, retryAfterSeconds: 2 });
    const first = await fetchRaw("/a");
    expect(first).toMatchObject({ code: 429, retryAfter: "2" });
    expect(JSON.parse((first as { body: string }).body)).toMatchObject({
      kind: "Status",
      reason: "TooManyRequests",
      code: 429,
      details: { retryAfterSeconds: 2 },
    });
    expect(hits).toEqual([]); // the server never saw it
    expect(await fetchRaw("/a")).toMatchObject({ code: 200 });
    expect(proxy.retryAfterSent).toEqual([2]);
  });

  it("matches faults to the requests they aim at: watches, lists, continue pages", async () => {
    proxy.inject(isContinue, { kind: "status", code: 500 });
    proxy.inject(isWatch, { kind: "status", code: 503 });
    expect(await fetchRaw("/l?limit=2")).toMatchObject({ code: 200 }); // a first page: neither
    expect(await fetchRaw("/l?limit=2&continue=abc")).toMatchObject({ code: 500 });
    expect(await fetchRaw("/l?watch=true")).toMatchObject({ code: 503 });
    expect(isList({ method: "GET", path: "/", query: new URLSearchParams(), watch: false })).toBe(true);
  });

  it("cuts a request before any answer, and an answer after some bytes", async () => {
    proxy.inject(anyRequest, { kind: "cut-request" });
    expect(await fetchRaw("/a")).toHaveProperty("error");
    proxy.inject(anyRequest, { kind: "cut-response", afterBytes: 3 });
    expect(await fetchRaw("/abcdef")).toEqual({ error: 'aborted after "hel"' });
    expect(await fetchRaw("/a")).toMatchObject({ code: 200 });
  });

  it("runs a hook before forwarding", async () => {
    proxy.inject(anyRequest, {
      kind: "before",
      hook: async () => {
        hits.push("hook");
      },
    });
    expect(await fetchRaw("/a")).toMatchObject({ code: 200 });
    expect(hits).toEqual(["hook", "/a"]);
  });

  it("cutAll breaks an open watch; while down, every request is cut", async () => {
    const w = await openWatch();
    expect(proxy.openWatches()).toBe(1);
    const broken = new Promise<string>((resolve) => {
      w.once("aborted", () => resolve("aborted"));
      w.once("end", () => resolve("clean end"));
    });
    proxy.cutAll();
    expect(await broken).toBe("aborted");
    proxy.setTarget(undefined);
    expect(await fetchRaw("/a")).toHaveProperty("error");
    proxy.setTarget(upstreamURL);
    expect(await fetchRaw("/a")).toMatchObject({ code: 200 });
  });
});
