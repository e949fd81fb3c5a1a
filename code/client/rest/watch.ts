/**
 * StreamWatcher — a watch response turned into events: the chunked body is cut into JSON
 * objects, each `{type, object}` one event, handed out through an async iterator.
 * Mirrors apimachinery pkg/watch/streamwatcher.go (StreamWatcher) and pkg/util/framer (the JSON
 * framer kubernetes/client-go's watch decoder reads through).
 *
 * Solves:
 * - the server pushes one JSON object per change down a response that never ends; the client must
 *   cut the byte stream into objects without waiting for the end, whatever the chunking — an
 *   object split across two TCP packets, or ten objects in one;
 * - framing by JSON structure, not by newline: our server (and kube-apiserver) end each event with
 *   a newline, but the contract is a stream of JSON objects, so a server that does not is still
 *   read right ("works against any conformant API server");
 * - a watch ends in three ways and the caller sees one: the server closes the stream (its
 *   timeoutSeconds, or an ERROR event), the connection drops, or the caller calls `stop()` —
 *   in each case the iterator finishes, and the reflector decides what to do next;
 * - a slow consumer must not make the client buffer without bound: the socket is paused while
 *   many events wait, so TCP pushes back on the server (whose watcher then buffers or closes).
 *
 * Invariants:
 * - events come out in the order the server sent them; after `stop()` none comes out;
 * - an ERROR event's object is a Status; a body that cannot be decoded ends the watch with one
 *   ERROR event (500, "unable to decode an event from the watch stream: …"), as upstream;
 * - a dropped connection ends the iterator quietly (upstream logs a probable EOF and stops).
 *
 * @upstream kubernetes/apimachinery pkg/watch/streamwatcher.go (StreamWatcher, receive: IsProbableEOF)
 * @upstream kubernetes/apimachinery pkg/util/framer/framer.go (NewJSONFramedReader)
 * @upstream kubernetes/client-go rest/request.go (newStreamWatcher)
 * @chapter 04-informers
 */
import type { IncomingMessage } from "node:http";
import type { KubeObject, Status, WatchEvent } from "../../api/meta.ts";
import type { Watch } from "../tools/cache/listwatch.ts";

/** Pause the socket past this many undelivered events; resume below the low mark. */
const highWater = 256;
const lowWater = 64;

// #region json-framer
/**
 * Cuts a byte stream into complete top-level JSON values. Braces and quotes are ASCII, and no
 * byte of a multi-byte UTF-8 character is below 0x80, so scanning bytes is safe.
 */
export class JSONFramer {
  private buf: Buffer = Buffer.alloc(0);
  private scanned = 0; // bytes of buf already scanned
  private start = -1; // where the current value began, or -1 between values
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Feeds bytes; returns the values completed by them, as text. */
  push(chunk: Buffer): string[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: string[] = [];
    for (let i = this.scanned; i < this.buf.length; i++) {
      const b = this.buf[i];
      if (this.start < 0) {
        if (b === 0x7b || b === 0x5b) {
          this.start = i;
          this.depth = 1;
        }
        continue; // whitespace (or newlines) between values
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) this.inString = false;
        continue;
      }
      if (b === 0x22) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if (b === 0x7d || b === 0x5d) {
        this.depth--;
        if (this.depth === 0) {
          out.push(this.buf.subarray(this.start, i + 1).toString("utf8"));
          this.start = -1;
        }
      }
    }
    // Keep only the unfinished value.
    if (this.start < 0) {
      this.buf = Buffer.alloc(0);
      this.scanned = 0;
    } else {
      this.buf = this.buf.subarray(this.start);
      this.scanned = this.buf.length;
      this.start = 0;
    }
    return out;
  }
}
// #endregion json-framer

// #region stream-watcher
export class StreamWatcher<T extends KubeObject = KubeObject> implements Watch<T> {
  private readonly queue: WatchEvent<T>[] = [];
  private wake: (() => void) | undefined;
  private done = false;
  private stopped = false;
  private paused = false;
  private readonly framer = new JSONFramer();

  constructor(
    private readonly res: IncomingMessage,
    /** Aborts the HTTP request (closes the connection). */
    private readonly abort: () => void,
    /** Called once when the watch is over, however it ended. */
    private readonly onDone: () => void = () => {},
  ) {
    res.on("data", (chunk: Buffer) => this.receive(chunk));
    // The server ended the stream, or the connection broke: either way the watch is over.
    res.on("end", () => this.finish());
    res.on("aborted", () => this.finish());
    res.on("error", () => this.finish());
    res.on("close", () => this.finish());
  }

  /** Stops the watch: closes the connection; no event is delivered after this. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue.length = 0;
    this.abort();
    this.finish();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<T>> {
    try {
      while (true) {
        const event = this.queue.shift();
        if (event) {
          if (this.paused && this.queue.length < lowWater) {
            this.paused = false;
            this.res.resume();
          }
          yield event;
          continue;
        }
        if (this.done) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      // A consumer that breaks out of its loop is done with the watch.
      this.stop();
    }
  }

  private receive(chunk: Buffer): void {
    if (this.done) return;
    for (const text of this.framer.push(chunk)) {
      const event = decodeEvent<T>(text);
      this.queue.push(event);
      if (event.type === "ERROR" && isDecodeFailure(event)) {
        // A stream we cannot read is over: report it once, then close.
        this.abort();
        this.finish();
        break;
      }
    }
    if (!this.paused && this.queue.length >= highWater) {
      this.paused = true;
      this.res.pause();
    }
    this.notify();
  }

  private finish(): void {
    if (!this.done) this.onDone();
    this.done = true;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
// #endregion stream-watcher

const decodeFailureMarker = "unable to decode an event from the watch stream";

function decodeEvent<T>(text: string): WatchEvent<T> {
  try {
    const e = JSON.parse(text) as WatchEvent<T>;
    const types = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];
    if (e && typeof e === "object" && types.includes(e.type) && e.object && typeof e.object === "object")
      return e;
    return decodeError(`got invalid watch event type or object: ${text.slice(0, 200)}`);
  } catch (err) {
    return decodeError((err as Error).message);
  }
}

function decodeError<T>(why: string): WatchEvent<T> {
  const status: Status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `${decodeFailureMarker}: ${why}`,
    reason: "InternalError",
    code: 500,
  };
  return { type: "ERROR", object: status };
}

function isDecodeFailure(event: WatchEvent<unknown>): boolean {
  return ((event.object as Status).message ?? "").startsWith(decodeFailureMarker);
}
