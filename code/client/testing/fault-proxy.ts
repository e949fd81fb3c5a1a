/**
 * FaultProxy — an HTTP proxy between a client and an API server that breaks things on purpose:
 * it cuts live connections (a watch mid-stream, a list mid-page), answers 429 with Retry-After
 * or 500 instead of the server, holds an answer back, runs a hook before forwarding (compact the
 * store between two pages), and plays dead while the server restarts.
 * Plays the part of etcd-io/etcd pkg/proxy/server.go (the functional tester's fault-injecting
 * proxy: PauseAccept, DelayTx, BlackholeTx, ResetListener), one layer up: it sees HTTP requests,
 * not bytes, so a fault can aim at "the next watch" or "the second page of a list".
 *
 * Solves:
 * - the informer's fault tests need the failures a real network and a real API server produce —
 *   a reset socket, a half-sent body, a throttled request — against the real server, with the
 *   moment of each fault chosen by a seeded test, not by chance;
 * - a server restart changes the server's port; the client keeps one address (the proxy's), as
 *   a client behind a load balancer does, and sees refused work while no server is behind it.
 *
 * Invariants:
 * - a request is matched against the queued faults in order; the first that matches is used up
 *   (each fault fires once) — no queued fault, no change: the request and answer pass unchanged;
 * - `cutAll()` destroys both sides of every exchange in flight, so the client sees a broken
 *   connection, never a clean end of stream (a clean end would be a timeout, not a fault);
 * - while `down`, every request's connection is destroyed before any answer byte.
 *
 * @upstream etcd-io/etcd pkg/proxy/server.go (Server: PauseAccept, DelayTx, BlackholeTx, ResetListener)
 * @chapter 04-informers
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

// #region faults
/** What the proxy does to one request instead of passing it on untouched. */
export type Fault =
  /** Answer with this code and a Kubernetes Status; with `retryAfterSeconds`, a Retry-After header. */
  | { kind: "status"; code: 429 | 500 | 503; retryAfterSeconds?: number }
  /** Drop the connection before answering: the client sees a reset, no status. */
  | { kind: "cut-request" }
  /** Forward, then drop the connection after `afterBytes` bytes of the answer's body. */
  | { kind: "cut-response"; afterBytes: number }
  /** Forward, but hold the server's answer `ms` before passing it on (writes go on meanwhile). */
  | { kind: "delay-response"; ms: number }
  /** Run `hook` (compact the store, write an object), then forward. */
  | { kind: "before"; hook: () => Promise<void> };

/** The request a fault is matched against. */
export interface ProxiedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** `?watch=true` (or `watch=1`). */
  watch: boolean;
}

export type Matcher = (r: ProxiedRequest) => boolean;

/** Matchers for the requests an informer makes. */
export const isWatch: Matcher = (r) => r.watch;
export const isList: Matcher = (r) => r.method === "GET" && !r.watch;
/** A list page after the first: it carries a continue token. */
export const isContinue: Matcher = (r) => isList(r) && r.query.has("continue");
export const anyRequest: Matcher = () => true;
// #endregion faults

/** One line per request, for a failing seed's story. */
export interface ProxyLogEntry {
  method: string;
  url: string;
  fault?: Fault["kind"];
  /** The status code the client got, when it got one. */
  code?: number;
}

interface Exchange {
  client: ServerResponse;
  upstream?: ReturnType<typeof httpRequest>;
}

export class FaultProxy {
  private target: URL | undefined;
  private readonly faults: { match: Matcher; fault: Fault }[] = [];
  private readonly exchanges = new Set<Exchange>();
  private readonly sockets = new Set<Socket>();
  // Kept-alive connections to the server: a proxy that dialled per request would double the cost.
  private readonly agent = new Agent({ keepAlive: true });
  /** Every request seen, in order. */
  readonly log: ProxyLogEntry[] = [];
  /** The Retry-After values (seconds) of the answers the proxy made up, in order. */
  readonly retryAfterSent: number[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target?: string): Promise<FaultProxy> {
    let proxy: FaultProxy | undefined;
    const server = createServer((req, res) => proxy?.handle(req, res));
    server.on("connection", (s: Socket) => {
      proxy?.sockets.add(s);
      s.once("close", () => proxy?.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    proxy = new FaultProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    proxy.setTarget(target);
    return proxy;
  }

  /** The server to forward to; undefined: no server (every request's connection is cut). */
  setTarget(url: string | undefined): void {
    this.target = url === undefined ? undefined : new URL(url);
  }

  get down(): boolean {
    return this.target === undefined;
  }

  /** Queues a fault for the next request that `match` accepts. */
  inject(match: Matcher, fault: Fault): void {
    this.faults.push({ match, fault });
  }

  /** Forgets the faults not yet used. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  pendingFaults(): number {
    return this.faults.length;
  }

  /** Open watch streams passing through right now. */
  openWatches(): number {
    let n = 0;
    for (const e of this.exchanges)
      if (e.client.req && /[?&]watch=(true|1)/.test(e.client.req.url ?? "")) n++;
    return n;
  }

  // #region cut
  /** Breaks every exchange in flight and every idle kept-alive connection, client side and server side. */
  cutAll(): void {
    for (const e of this.exchanges) this.cut(e);
    for (const s of this.sockets) s.destroy();
  }

  private cut(e: Exchange): void {
    this.exchanges.delete(e);
    e.upstream?.destroy();
    e.client.socket?.destroy();
  }
  // #endregion cut

  async close(): Promise<void> {
    this.cutAll();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private take(r: ProxiedRequest): Fault | undefined {
    const i = this.faults.findIndex((f) => f.match(r));
    if (i < 0) return undefined;
    return this.faults.splice(i, 1)[0].fault;
  }

  // #region handle
  private handle(req: IncomingMessage, res: ServerResponse): void {
    const parsed = new URL(req.url ?? "/", "http://proxy");
    const r: ProxiedRequest = {
      method: req.method ?? "GET",
      path: parsed.pathname,
      query: parsed.searchParams,
      watch: ["true", "1"].includes(parsed.searchParams.get("watch") ?? ""),
    };
    const entry: ProxyLogEntry = { method: r.method, url: req.url ?? "" };
    this.log.push(entry);
    const e: Exchange = { client: res };
    this.exchanges.add(e);
    res.once("close", () => this.exchanges.delete(e));
    const fault = this.down ? undefined : this.take(r);
    entry.fault = fault?.kind;
    if (this.down || fault?.kind === "cut-request") {
      this.cut(e);
      return;
    }
    if (fault?.kind === "status") {
      entry.code = fault.code;
      this.answerStatus(res, fault.code, fault.retryAfterSeconds);
      return;
    }
    const forward = () => this.forward(req, e, entry, fault);
    if (fault?.kind === "before") {
      // The body (if any) waits in the socket's buffer while the hook runs.
      req.pause();
      fault.hook().then(forward, () => this.cut(e));
      return;
    }
    forward();
  }

  /** A made-up answer, shaped as the API server's own (a Status, Retry-After as it sets it). */
  private answerStatus(res: ServerResponse, code: number, retryAfter: number | undefined): void {
    const reason = code === 429 ? "TooManyRequests" : code === 503 ? "ServiceUnavailable" : "InternalError";
    const body = JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `injected by the fault proxy: ${code}`,
      reason,
      details: retryAfter === undefined ? undefined : { retryAfterSeconds: retryAfter },
      code,
    });
    const headers: OutgoingHttpHeaders = { "Content-Type": "application/json" };
    if (retryAfter !== undefined) {
      headers["Retry-After"] = String(retryAfter);
      this.retryAfterSent.push(retryAfter);
    }
    res.writeHead(code, headers);
    res.end(body);
  }

  private forward(req: IncomingMessage, e: Exchange, entry: ProxyLogEntry, fault: Fault | undefined): void {
    const target = this.target;
    if (!target || !this.exchanges.has(e)) {
      this.cut(e);
      return;
    }
    const headers = { ...req.headers, host: target.host };
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        agent: this.agent,
      },
      (up) => {
        entry.code = up.statusCode;
        const pass = () => {
          if (!this.exchanges.has(e)) return up.destroy();
          const out = { ...up.headers };
          // Hop-by-hop headers are the proxy's own business on each side.
          delete out.connection;
          delete out["keep-alive"];
          delete out["transfer-encoding"];
          e.client.writeHead(up.statusCode ?? 502, out);
          if (fault?.kind === "cut-response") return this.passThenCut(up, e, fault.afterBytes);
          up.pipe(e.client);
          up.once("aborted", () => this.cut(e));
          up.once("error", () => this.cut(e));
        };
        if (fault?.kind === "delay-response") {
          up.pause();
          setTimeout(pass, fault.ms);
        } else pass();
      },
    );
    e.upstream = upstream;
    // No server answering (restarting, gone): the client sees its connection drop.
    upstream.once("error", () => this.cut(e));
    req.pipe(upstream);
    req.resume();
  }

  /** Passes `afterBytes` bytes of the body, and cuts once they are on their way: a half-sent answer. */
  private passThenCut(up: IncomingMessage, e: Exchange, afterBytes: number): void {
    let left = afterBytes;
    let cutting = false;
    // Cut in the write's callback: a cut right away could discard the bytes still queued.
    const finish = (last: Buffer) => {
      if (cutting) return;
      cutting = true;
      if (last.length === 0) this.cut(e);
      else e.client.write(last, () => this.cut(e));
    };
    up.on("data", (chunk: Buffer) => {
      if (cutting || !this.exchanges.has(e)) return;
      if (chunk.length < left) {
        left -= chunk.length;
        e.client.write(chunk);
        return;
      }
      finish(chunk.subarray(0, left));
    });
    // A body shorter than afterBytes: all of it passed, then the cut.
    up.once("end", () => finish(Buffer.alloc(0)));
    up.once("error", () => this.cut(e));
  }
  // #endregion handle
}
