/**
 * The request path against tiny local HTTP servers that answer exactly what each test needs:
 * rate limiting on a FakeClock, retries on Retry-After (waits recorded, never slept), timeouts,
 * error decoding, and the watch stream's framing and endings.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject, Status } from "../../api/meta.ts";
import { StatusError, suggestsClientDelay } from "../errors.ts";
import { FakeClock } from "../util/clock.ts";
import { RESTClient } from "./client.ts";
import type { Config } from "./config.ts";
import { goDuration } from "./request.ts";
import { JSONFramer } from "./watch.ts";

type Handler = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server on a free port; `requests()` is how many it has received. */
async function serve(handler: Handler): Promise<{ url: string; requests: () => number; bodies: string[] }> {
  let n = 0;
  const bodies: string[] = [];
  const s = createServer((req, res) => {
    const attempt = ++n;
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      bodies.push(body);
      handler(req, res, attempt);
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, requests: () => n, bodies };
}

const json = (res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(code, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const okPod = { apiVersion: "v1", kind: "Pod", metadata: { name: "x" } };

function client(url: string, extra: Partial<Config> = {}) {
  const waits: number[] = [];
  const c = new RESTClient(
    {
      host: url,
      sleep: async (ms) => {
        waits.push(ms);
      },
      ...extra,
    },
    { group: "", version: "v1" },
  );
  return { c, waits };
}

async function waitUntil(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

async function failure(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected a StatusError");
}

describe("the rate limiter", () => {
  it("lets a burst of 10 through at once, then one request per 200 ms at 5 qps (the defaults)", async () => {
    const clock = new FakeClock();
    const srv = await serve((_req, res) => json(res, 200, okPod));
    const { c } = client(srv.url, { clock });
    const done: number[] = [];
    const all = Array.from({ length: 13 }, (_, i) =>
      c
        .get()
        .namespace("default")
        .resource("pods")
        .name(`p${i}`)
        .do()
        .then(() => done.push(i)),
    );
    await waitUntil("the burst", () => srv.requests() === 10 && done.length === 10);
    expect(clock.hasWaiters()).toBe(true); // three requests wait for tokens
    clock.step(199);
    await new Promise((r) => setTimeout(r, 20));
    expect(srv.requests()).toBe(10);
    clock.step(1);
    await waitUntil("the 11th", () => srv.requests() === 11);
    clock.step(400);
    await Promise.all(all);
    expect(srv.requests()).toBe(13);
  });

  it("is off with a negative qps, and a given limiter wins over qps/burst", async () => {
    const srv = await serve((_req, res) => json(res, 200, okPod));
    expect(client(srv.url, { qps: -1 }).c.rateLimiter).toBeUndefined();
    const limited = client(srv.url, { qps: 50, burst: 3 }).c.rateLimiter;
    expect([limited?.qps, limited?.burst]).toEqual([50, 3]);
    const defaults = client(srv.url).c.rateLimiter;
    expect([defaults?.qps, defaults?.burst]).toEqual([5, 10]);
  });
});

describe("retries", () => {
  it("retries a 429 after the Retry-After it names, then returns the answer", async () => {
    const srv = await serve((_req, res, n) =>
      n <= 2
        ? json(res, 429, { kind: "Status", status: "Failure", code: 429 }, { "Retry-After": "3" })
        : json(res, 200, okPod),
    );
    const { c, waits } = client(srv.url);
    const pod = await c.get().resource("pods").namespace("default").name("x").do<KubeObject>();
    expect(pod.metadata.name).toBe("x");
    expect(srv.requests()).toBe(3);
    expect(waits).toEqual([3000, 3000]);
  });

  it("takes a token from the rate limiter again before each retry", async () => {
    const clock = new FakeClock();
    const srv = await serve((_req, res, n) =>
      n === 1 ? json(res, 429, {}, { "Retry-After": "0" }) : json(res, 200, okPod),
    );
    const { c, waits } = client(srv.url, { clock, qps: 5, burst: 1 });
    const p = c.get().resource("pods").do();
    await waitUntil("the 429", () => srv.requests() === 1 && waits.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(srv.requests()).toBe(1); // the retry waits for the next token, 200 ms away
    expect(clock.nextDue()).toBe(200);
    clock.step(200);
    await p;
    expect(srv.requests()).toBe(2);
  });

  it("resends the same body on a retried POST", async () => {
    const srv = await serve((_req, res, n) =>
      n === 1
        ? json(res, 503, { kind: "Status", status: "Failure", code: 503 }, { "Retry-After": "1" })
        : json(res, 201, okPod),
    );
    const { c } = client(srv.url);
    await c.post().resource("pods").namespace("default").body(okPod).do();
    expect(srv.bodies).toEqual([JSON.stringify(okPod), JSON.stringify(okPod)]);
  });

  it("gives up after 10 retries with the last answer's StatusError", async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(503, { "Retry-After": "1", "Content-Type": "text/plain" });
      res.end("overloaded");
    });
    const { c, waits } = client(srv.url);
    const err = await failure(c.get().resource("pods").do());
    expect(srv.requests()).toBe(11);
    expect(waits).toHaveLength(10);
    expect(err).toMatchObject({ code: 503, reason: "ServiceUnavailable" });
    expect(suggestsClientDelay(err)).toBe(1);
  });

  it("does not retry a 5xx without Retry-After, nor a 4xx other than 429", async () => {
    const srv = await serve((req, res) =>
      json(res, req.url?.includes("a") ? 500 : 409, {
        kind: "Status",
        status: "Failure",
        code: 0,
        reason: "",
      }),
    );
    const { c, waits } = client(srv.url);
    await failure(c.get().resource("a").do());
    await failure(c.get().resource("b").do());
    expect(srv.requests()).toBe(2);
    expect(waits).toEqual([]);
  });

  it("retries a GET whose connection broke, not a POST", async () => {
    const srv = await serve((req, res, n) =>
      n === 1 || req.method === "POST" ? req.socket.destroy() : json(res, 200, okPod),
    );
    const { c, waits } = client(srv.url);
    await c.get().resource("pods").do();
    expect(waits).toEqual([1000]);
    const err = await failure(c.post().resource("pods").body(okPod).do());
    expect(err.code).toBe(0);
    expect(err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/pods: socket hang up/);
    expect(srv.requests()).toBe(3);
  });
});

describe("errors", () => {
  it("keep the server's Status whole", async () => {
    const status: Status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "x" is forbidden: User "u" cannot get resource "pods"',
      reason: "Forbidden",
      details: { name: "x", kind: "pods" },
      code: 403,
    };
    const srv = await serve((_req, res) => json(res, 403, status));
    const err = await failure(client(srv.url).c.get().resource("pods").name("x").do());
    expect(err.status).toEqual(status);
    expect(err.message).toBe(status.message);
  });

  it("synthesize a Status for an answer that is not one, as NewGenericServerResponse", async () => {
    const srv = await serve((req, res) => {
      if (req.method === "POST") return json(res, 409, { unexpected: true });
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<html>bad gateway</html>");
    });
    const { c } = client(srv.url);
    const proxy = await failure(c.get().resource("pods").namespace("d").name("x").do());
    expect(proxy).toMatchObject({ code: 502, reason: "InternalError" });
    // text/html is a text type: the page goes into the message.
    expect(proxy.message).toBe(
      'an error on the server ("<html>bad gateway</html>") has prevented the request from succeeding (get pods x)',
    );
    const exists = await failure(c.post().resource("pods").body(okPod).do());
    expect(exists).toMatchObject({
      code: 409,
      reason: "AlreadyExists",
      message: "the server reported a conflict (post pods)",
    });
  });

  it("time out a request that gets no answer, on the client's clock", async () => {
    const clock = new FakeClock();
    const srv = await serve(() => {}); // never answers
    const { c } = client(srv.url, { clock, timeout: 30_000 });
    const p = failure(c.get().resource("pods").do());
    await waitUntil("the request to arrive", () => srv.requests() === 1);
    clock.step(30_000);
    const err = await p;
    expect(err).toMatchObject({ code: 0, reason: "Timeout" });
    expect(err.message).toMatch(
      /^the client gave up on GET http:\/\/.*\/api\/v1\/pods\?timeout=30s after 30s/,
    );
  });

  it("reject with the caller's reason when the caller aborts", async () => {
    const srv = await serve(() => {});
    const ac = new AbortController();
    const p = client(srv.url).c.get().resource("pods").do(ac.signal);
    await waitUntil("the request to arrive", () => srv.requests() === 1);
    ac.abort(new Error("shutting down"));
    await expect(p).rejects.toThrow("shutting down");
  });

  it("pass Warning headers to the warning handler", async () => {
    const srv = await serve((_req, res) =>
      json(res, 200, okPod, { Warning: '299 - "v1 Foo is deprecated"' }),
    );
    const seen: string[] = [];
    await client(srv.url, { warningHandler: (m) => seen.push(m) })
      .c.get()
      .resource("pods")
      .do();
    expect(seen).toEqual(["v1 Foo is deprecated"]);
  });
});

describe("watch", () => {
  const event = (type: string, name: string) =>
    JSON.stringify({ type, object: { ...okPod, metadata: { name } } });

  it("decodes events however the stream is cut, and ends when the server closes it", async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      const a = `${event("ADDED", "a")}\n`;
      res.write(a.slice(0, 10));
      setTimeout(() => {
        // the rest of a, then b and c with no newline between them
        res.write(`${a.slice(10)}${event("MODIFIED", "b")}${event("DELETED", "c")}`);
        res.end();
      }, 20);
    });
    const w = await client(srv.url).c.get().resource("pods").watch();
    const seen: string[] = [];
    for await (const e of w) seen.push(`${e.type} ${(e.object as KubeObject).metadata.name}`);
    expect(seen).toEqual(["ADDED a", "MODIFIED b", "DELETED c"]);
  });

  it("ends the iterator when the connection drops mid-stream", async () => {
    const srv = await serve((req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write(`${event("ADDED", "a")}\n`);
      setTimeout(() => req.socket.destroy(), 20);
    });
    const w = await client(srv.url).c.get().resource("pods").watch();
    const seen: string[] = [];
    for await (const e of w) seen.push(e.type);
    expect(seen).toEqual(["ADDED"]);
  });

  it("hands out an ERROR event's Status, and one ERROR for a stream it cannot decode", async () => {
    const gone = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      code: 410,
      reason: "Expired",
      message: "too old resource version: 1 (5)",
    };
    const srv = await serve((req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      if (req.url?.includes("resourceVersion=1"))
        res.end(`${JSON.stringify({ type: "ERROR", object: gone })}\n`);
      else res.write(`${event("ADDED", "a")}\n{"type": 5, "object": {}}\n${event("ADDED", "never")}\n`);
    });
    const { c } = client(srv.url);
    const expired = await c.get().resource("pods").params({ resourceVersion: "1" }).watch();
    const events = [];
    for await (const e of expired) events.push(e);
    expect(events).toEqual([{ type: "ERROR", object: gone }]);

    const garbled = await c.get().resource("pods").watch();
    const types: string[] = [];
    for await (const e of garbled)
      types.push(e.type === "ERROR" ? `ERROR ${(e.object as Status).code}` : e.type);
    expect(types).toEqual(["ADDED", "ERROR 500"]);
  });

  it("stop() closes the connection and nothing is delivered after it", async () => {
    let closed = false;
    const srv = await serve((req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write(`${event("ADDED", "a")}\n${event("ADDED", "b")}\n`);
      req.socket.on("close", () => {
        closed = true;
      });
    });
    const w = await client(srv.url).c.get().resource("pods").watch();
    const seen: string[] = [];
    for await (const e of w) {
      seen.push((e.object as KubeObject).metadata.name as string);
      w.stop();
    }
    expect(seen).toEqual(["a"]);
    await waitUntil("the server to see the close", () => closed);
  });

  it("stops when the caller's signal aborts after the watch started", async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write(`${event("ADDED", "a")}\n`);
    });
    const ac = new AbortController();
    const w = await client(srv.url).c.get().resource("pods").watch(ac.signal);
    const seen: string[] = [];
    for await (const e of w) {
      seen.push(e.type);
      ac.abort();
    }
    expect(seen).toEqual(["ADDED"]);
  });

  it("fails to start with the StatusError of a non-200 answer", async () => {
    const srv = await serve((_req, res) =>
      json(res, 403, {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        code: 403,
        reason: "Forbidden",
        message: "no",
      }),
    );
    const err = await failure(client(srv.url).c.get().resource("pods").watch());
    expect(err).toMatchObject({ code: 403, reason: "Forbidden", message: "no" });
  });
});

describe("pieces", () => {
  it("JSONFramer keeps braces inside strings and escaped quotes", () => {
    const f = new JSONFramer();
    expect(f.push(Buffer.from('{"a":"}{\\"'))).toEqual([]);
    expect(f.push(Buffer.from('x"}\n[1,{"b":2}] {"c":"é"}'))).toEqual([
      '{"a":"}{\\"x"}',
      '[1,{"b":2}]',
      '{"c":"é"}',
    ]);
  });

  it("goDuration writes Go's time.Duration strings", () => {
    expect([500, 1500, 30_000, 90_000, 3_600_000].map(goDuration)).toEqual([
      "500ms",
      "1.5s",
      "30s",
      "1m30s",
      "1h0m0s",
    ]);
  });

  it("URLs: namespace segment only when set, names escaped, group paths", () => {
    const c = new RESTClient({ host: "https://h:6443/prefix" }, { group: "apps", version: "v1" });
    expect(
      c.get().namespace("ns").resource("deployments").name("d").subResource("scale").url().toString(),
    ).toBe("https://h:6443/prefix/apis/apps/v1/namespaces/ns/deployments/d/scale");
    const core = new RESTClient({ host: "https://h" }, { group: "", version: "v1" });
    expect(core.get().namespace("").resource("nodes").name("system:node:a/b").url().pathname).toBe(
      "/api/v1/nodes/system:node:a%2Fb",
    );
    expect(
      core.get().resource("pods").params({ limit: 0, watch: false, labelSelector: "a=b" }).url().search,
    ).toBe("?labelSelector=a%3Db");
  });
});
