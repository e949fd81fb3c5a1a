// FaultProxy against a small echo server: every mode, the way back to pass, and a stop that
// leaves no socket open. No timed asserts: "hangs" is checked as "has not answered while the
// echo server answered a direct client", and "delayed" by the order of arrivals.
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FaultProxy } from "./fault-proxy.ts";

let echo: Server;
let echoPort: number;
/** Sockets the echo server accepted (to check that stop closes its side too). */
let served: Set<Socket>;
let proxy: FaultProxy | undefined;
const clients: Socket[] = [];

beforeEach(async () => {
  served = new Set();
  echo = createServer((s) => {
    served.add(s);
    s.on("close", () => served.delete(s));
    s.on("error", () => {});
    s.pipe(s);
  });
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
  echoPort = (echo.address() as { port: number }).port;
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await proxy?.stop();
  proxy = undefined;
  for (const s of served) s.destroy();
  await new Promise<void>((r) => echo.close(() => r()));
});

/** A client of `port` that collects what it reads; `closed` settles with whether it saw an error. */
function client(port: number) {
  const socket = connect(port, "127.0.0.1");
  clients.push(socket);
  let text = "";
  let error: Error | undefined;
  socket.setEncoding("utf8").on("data", (c: string) => {
    text += c;
  });
  socket.on("error", (e) => {
    error = e;
  });
  const closed = new Promise<Error | undefined>((r) => socket.once("close", () => r(error)));
  const connected = new Promise<void>((r) => socket.once("connect", () => r()));
  return {
    socket,
    connected,
    closed,
    text: () => text,
    /** Resolves once the text read so far ends with `suffix`. */
    async until(suffix: string) {
      while (!text.endsWith(suffix)) await new Promise((r) => socket.once("data", r));
      return text;
    },
  };
}

/** A round trip straight to the echo server: proof that time passed and the server answers. */
async function directRoundTrip(): Promise<void> {
  const c = client(echoPort);
  c.socket.write("ping");
  await c.until("ping");
  c.socket.destroy();
}

const start = async () => {
  proxy = await FaultProxy.start(`127.0.0.1:${echoPort}`);
  return proxy;
};

describe("FaultProxy", () => {
  it("pass: forwards both ways, and accepts a URL as its target", async () => {
    proxy = await FaultProxy.start(`http://127.0.0.1:${echoPort}`);
    const c = client(proxy.port);
    c.socket.write("hello ");
    c.socket.write("world");
    expect(await c.until("hello world")).toBe("hello world");
    expect(proxy.address).toBe(`127.0.0.1:${proxy.port}`);
    expect(proxy.open).toBe(1);
  });

  it("delay: bytes arrive after the delay, in order, even when the delay shrinks meanwhile", async () => {
    const p = await start();
    const c = client(p.port);
    await c.connected;
    p.delay(1500);
    c.socket.write("a");
    // A direct round trip to the same server comes back; the delayed echo has not.
    await directRoundTrip();
    expect(c.text()).toBe("");
    // Shrink the delay: "b" alone would be due at once, but must still come after "a".
    p.delay(0);
    c.socket.write("b");
    expect(await c.until("ab")).toBe("ab");
  });

  it("drop: an open connection hangs, a new one hangs too; pass delivers what was held", async () => {
    const p = await start();
    const old = client(p.port);
    old.socket.write("1");
    await old.until("1");
    p.drop();
    old.socket.write("2");
    const fresh = client(p.port);
    await fresh.connected; // accepted: a partition does not refuse, it goes silent
    fresh.socket.write("x");
    // The echo server answers a direct client meanwhile; through the proxy, nothing came back.
    await directRoundTrip();
    await directRoundTrip();
    expect(old.text()).toBe("1");
    expect(fresh.text()).toBe("");
    expect(p.current).toEqual({ kind: "drop" });
    p.pass();
    expect(await old.until("12")).toBe("12");
    expect(await fresh.until("x")).toBe("x");
  });

  it("drop: a chunk already queued by a delay is held as well", async () => {
    const p = await start();
    const c = client(p.port);
    await c.connected;
    p.delay(200);
    c.socket.write("late");
    p.drop();
    await new Promise((r) => setTimeout(r, 300)); // past the chunk's due time
    await directRoundTrip();
    expect(c.text()).toBe("");
    p.pass();
    expect(await c.until("late")).toBe("late");
  });

  it("reset: open connections fail at once, new ones are destroyed on arrival; pass heals", async () => {
    const p = await start();
    const c = client(p.port);
    c.socket.write("hi");
    await c.until("hi");
    p.reset();
    const err = await c.closed;
    expect(err && (err as NodeJS.ErrnoException).code).toBe("ECONNRESET");
    const refused = client(p.port);
    expect(await refused.closed).toBeDefined();
    expect(p.open).toBe(0);
    p.pass();
    const healed = client(p.port);
    healed.socket.write("back");
    expect(await healed.until("back")).toBe("back");
    expect(p.accepted).toBe(3);
  });

  it("a side that closes ends the pair", async () => {
    const p = await start();
    const c = client(p.port);
    c.socket.write("x");
    await c.until("x");
    for (const s of served) s.destroy();
    await c.closed;
    expect(p.open).toBe(0);
  });

  it("stop closes every socket, in any mode, and the listener", async () => {
    const p = await start();
    const a = client(p.port);
    a.socket.write("a");
    await a.until("a");
    p.drop();
    const b = client(p.port);
    await b.connected;
    expect(p.open).toBe(2);
    await p.stop();
    proxy = undefined;
    await Promise.all([a.closed, b.closed]);
    expect(p.open).toBe(0);
    // The echo server's side of the dialled connection is closed too.
    while (served.size > 0) await new Promise((r) => setTimeout(r, 10));
    const late = client(p.port);
    const err = await late.closed;
    expect(err && (err as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });
});
