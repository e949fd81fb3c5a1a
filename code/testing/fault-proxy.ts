/**
 * FaultProxy — a TCP proxy on loopback that one component's traffic to the API server goes
 * through, so a test can break that one path on purpose: delay it, partition it, reset it, heal it.
 * No upstream counterpart in the product; upstream's chaos tests use iptables or toxiproxy.
 *
 * Solves:
 * - a leader-election test must cut one candidate off from the API server while the others still
 *   reach it: killing the API server would cut everybody, and a firewall rule needs root. Each
 *   candidate gets its own proxy (`--master=<proxy url>`), and the test switches its mode;
 * - the faults must look like a network's, not like a crash: `drop` stops forwarding and lets the
 *   connections hang (a partition: no error, no answer, the client's own timeout must notice),
 *   `reset` destroys them (a peer that answers with RST: the client sees an error at once).
 *
 * The modes, and what a client on the near side sees:
 *
 * | mode | bytes in flight | a new connection |
 * | --- | --- | --- |
 * | `pass` | forwarded at once | dialled through to the target |
 * | `delay` (ms) | forwarded `ms` later, in order | dialled through; its bytes are delayed too |
 * | `drop` | held, not forwarded (reads paused: TCP backpressure) | accepted, then hangs |
 * | `reset` | every open connection destroyed | destroyed on arrival |
 *
 * Back to `pass` after `drop`: the held bytes flow again, as TCP's retransmission would deliver
 * them once a partition heals — unless a side gave up and closed first.
 *
 * Invariants:
 * - bytes of one direction of one connection are never reordered: a delayed chunk is queued
 *   behind every earlier one, even when the delay shrinks meanwhile;
 * - `stop` destroys every socket it ever accepted or dialled and closes the listener: a test's
 *   `finally` leaves nothing open, whatever mode it ended in;
 * - it is a byte proxy: TLS passes through untouched (the client verifies the server's
 *   certificate against the target's name, so give the client the target's TLS server name).
 *
 * @upstream none — test tooling (Shopify/toxiproxy does the same for Go tests: latency, timeout, reset_peer)
 * @chapter 06-leader-election
 */
import { connect, createServer, type Server, type Socket } from "node:net";

/** What the proxy does to the traffic now. */
export type FaultMode =
  | { kind: "pass" }
  | { kind: "delay"; ms: number }
  | { kind: "drop" }
  | { kind: "reset" };

/** One accepted connection: the client's socket, the target's once dialled, and the delay queues. */
interface Link {
  client: Socket;
  /** Undefined until dialled (a connection accepted during `drop` waits for `pass`). */
  target?: Socket;
  toTarget: DelayQueue;
  toClient: DelayQueue;
}

// #region delay-queue
/**
 * One direction of one connection: chunks with the time each may be written. Due times never
 * decrease (a chunk is due no earlier than the one before it), and one timer drains the head.
 */
class DelayQueue {
  private readonly items: { due: number; chunk: Buffer }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastDue = 0;
  /** During `drop`: chunks already queued wait too (a partition stops the bytes in flight). */
  private held = false;

  constructor(private readonly write: (chunk: Buffer) => void) {}

  push(chunk: Buffer, delayMs: number): void {
    const now = Date.now();
    const due = Math.max(now + delayMs, this.lastDue);
    this.lastDue = due;
    // Nothing waiting and nothing to wait for: write at once (the `pass` path).
    if (this.items.length === 0 && due <= now && !this.held) {
      this.write(chunk);
      return;
    }
    this.items.push({ due, chunk });
    this.arm();
  }

  hold(held: boolean): void {
    this.held = held;
    if (held) {
      clearTimeout(this.timer);
      this.timer = undefined;
    } else this.arm();
  }

  private arm(): void {
    if (this.timer || this.items.length === 0 || this.held) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const now = Date.now();
        while (this.items.length > 0 && this.items[0].due <= now) this.write(this.items.shift()!.chunk);
        this.arm();
      },
      Math.max(0, this.items[0].due - Date.now()),
    );
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.items.length = 0;
  }
}
// #endregion delay-queue

export class FaultProxy {
  private mode: FaultMode = { kind: "pass" };
  private readonly links = new Set<Link>();
  /** Connections accepted since start, whatever became of them. */
  accepted = 0;

  private constructor(
    private readonly server: Server,
    private readonly targetHost: string,
    private readonly targetPort: number,
    /** The port the proxy listens on, on 127.0.0.1. */
    readonly port: number,
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards to `target` (`host:port`, or a URL). */
  static async start(target: string): Promise<FaultProxy> {
    const { host, port } = parseTarget(target);
    let proxy: FaultProxy | undefined;
    const server = createServer((socket) => proxy?.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    proxy = new FaultProxy(server, host, port, typeof address === "object" && address ? address.port : 0);
    return proxy;
  }

  /** `127.0.0.1:<port>`: give it to the component instead of the API server's address. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Connections open now (accepted and not yet closed by either side). */
  get open(): number {
    return this.links.size;
  }

  get current(): FaultMode {
    return this.mode;
  }

  // #region modes
  /** Forward everything at once; after `drop`, the held bytes flow again. */
  pass(): void {
    this.setMode({ kind: "pass" });
  }

  /** Forward every chunk, both ways, `ms` after it arrived. */
  delay(ms: number): void {
    this.setMode({ kind: "delay", ms });
  }

  /** A partition: stop forwarding; open connections and new ones hang. */
  drop(): void {
    this.setMode({ kind: "drop" });
  }

  /** Destroy every open connection, and each new one as it arrives, until the mode changes. */
  reset(): void {
    this.setMode({ kind: "reset" });
  }

  private setMode(mode: FaultMode): void {
    this.mode = mode;
    for (const link of [...this.links]) {
      if (mode.kind === "reset") {
        this.close(link, true);
        continue;
      }
      if (mode.kind === "drop") {
        // Paused reads: nothing is read, so nothing is forwarded, and the kernel's buffers
        // fill and push back on the sender as a silent network would.
        link.client.pause();
        link.target?.pause();
        link.toTarget.hold(true);
        link.toClient.hold(true);
        continue;
      }
      if (!link.target) this.dial(link);
      link.toTarget.hold(false);
      link.toClient.hold(false);
      link.client.resume();
      link.target?.resume();
    }
  }
  // #endregion modes

  private delayMs(): number {
    return this.mode.kind === "delay" ? this.mode.ms : 0;
  }

  // #region accept
  private accept(client: Socket): void {
    this.accepted++;
    if (this.mode.kind === "reset") {
      client.resetAndDestroy();
      return;
    }
    const link: Link = {
      client,
      toTarget: new DelayQueue((chunk) => link.target?.write(chunk)),
      toClient: new DelayQueue((chunk) => {
        if (!client.destroyed) client.write(chunk);
      }),
    };
    this.links.add(link);
    client.on("data", (chunk: Buffer) => link.toTarget.push(chunk, this.delayMs()));
    // Either side ending or failing ends the pair: a proxy must not keep half a connection.
    client.on("close", () => this.close(link, false));
    client.on("error", () => this.close(link, false));
    if (this.mode.kind === "drop") {
      client.pause();
      return;
    }
    this.dial(link);
  }

  private dial(link: Link): void {
    // Bytes written before the target answers wait in the socket's own buffer (net.Socket queues them).
    const target = connect(this.targetPort, this.targetHost);
    link.target = target;
    target.on("data", (chunk: Buffer) => link.toClient.push(chunk, this.delayMs()));
    target.on("close", () => this.close(link, false));
    target.on("error", () => this.close(link, false));
    if (this.mode.kind === "drop") target.pause();
  }
  // #endregion accept

  /** Ends both sockets of a pair; `reset` sends RST to the client instead of a FIN. */
  private close(link: Link, reset: boolean): void {
    if (!this.links.delete(link)) return;
    link.toTarget.clear();
    link.toClient.clear();
    if (reset && !link.client.destroyed) link.client.resetAndDestroy();
    else link.client.destroy();
    link.target?.destroy();
  }

  /** Closes the listener and destroys every connection, whatever the mode. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const link of [...this.links]) this.close(link, false);
    await closed;
  }
}

function parseTarget(target: string): { host: string; port: number } {
  if (/^[a-z]+:\/\//.test(target)) {
    const u = new URL(target);
    return { host: u.hostname, port: Number(u.port || (u.protocol === "https:" ? 443 : 80)) };
  }
  const colon = target.lastIndexOf(":");
  return { host: target.slice(0, colon).replace(/^\[|\]$/g, ""), port: Number(target.slice(colon + 1)) };
}
