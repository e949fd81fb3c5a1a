/**
 * ReadLogs — the kubelet's reader of a container's CRI log file: what `kubectl logs` finally
 * reads, line by line, with `--tail`, `--since`, `--limit-bytes`, `--timestamps` and `-f`.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go.
 *
 * Solves: the runtime writes every chunk a container prints as one line of its own,
 * `<RFC3339Nano time> <stdout|stderr> <F|P> <content>`, so the kubelet can tell the two streams
 * apart, put a time on each line and rebuild lines longer than the runtime's buffer (`P` =
 * partial: the next line continues it; `F` = full: it ends here). This file turns that back into
 * what the container printed, and keeps reading while the file grows when asked to follow.
 *
 * Invariants:
 * - a `P` line's content is written without its line end, so P…P F chunks come out as one line
 *   (with `timestamps`, each chunk carries its own time, as upstream's);
 * - `tailLines` counts lines of the file (a partial chunk is a line), as upstream's tail does;
 * - `limitBytes` cuts the output at exactly that many bytes, then stops without error;
 * - following stops when the caller's signal aborts (the client went away) or when the
 *   container is no longer running — asked each time the reader reaches the end of the file and
 *   every state-check period while it waits — after one last read, so nothing written before it
 *   exited is lost (so `-f` on an exited container prints its log and ends at once).
 *
 * What upstream does differently: it watches the file with fsnotify and reopens it when the
 * runtime rotates it (`--container-log-max-size`); we watch with `fs.watch` plus a poll and never
 * rotate. Its timestamps are Go times with nanoseconds; ours keep the nanoseconds as text.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go (parseCRILog, NewLogOptions, ReadLogs, logWriter, waitLogs)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/constants.go (LogStreamStdout, LogTagPartial, LogTagFull)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/tail.go (FindTailLineStartIndex)
 * @chapter 07-kubelet
 */
import { watch } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

/** CRI's stream names and tags (cri-api constants.go). */
export type LogStreamType = "stdout" | "stderr";
export const LogTagPartial = "P";
export const LogTagFull = "F";
/** upstream's stateCheckPeriod: how long a quiet file waits before asking if the container runs. */
export const stateCheckPeriodMs = 5000;

/** One parsed line of a CRI log file (upstream's logMessage). */
export interface LogMessage {
  /** Nanoseconds since the epoch (Date loses them; sinceTime and the output keep them). */
  timestampNs: bigint;
  stream: LogStreamType;
  /** The content; a full line keeps its "\n", a partial one has none. */
  log: Buffer;
}

/**
 * What the kubelet reads with (upstream's LogOptions, made from the API's PodLogOptions):
 * `tail` -1 and `bytes` -1 mean "no limit"; `sinceNs` is 0 for "from the start".
 */
export interface LogOptions {
  tail: number;
  bytes: number;
  sinceNs: bigint;
  follow: boolean;
  timestamp: boolean;
}

/** The fields of v1.PodLogOptions the reader honours (`previous` picks the file, not the reader). */
export interface PodLogOptions {
  tailLines?: number;
  limitBytes?: number;
  sinceSeconds?: number;
  /** RFC 3339. */
  sinceTime?: string;
  follow?: boolean;
  timestamps?: boolean;
}

/** NewLogOptions: sinceTime wins over sinceSeconds (the API server lets only one through). */
export function newLogOptions(apiOpts: PodLogOptions, now: Date): LogOptions {
  let sinceNs = 0n;
  if (apiOpts.sinceTime) sinceNs = BigInt(Date.parse(apiOpts.sinceTime)) * 1_000_000n;
  else if (apiOpts.sinceSeconds !== undefined)
    sinceNs = BigInt(now.getTime() - apiOpts.sinceSeconds * 1000) * 1_000_000n;
  return {
    tail: apiOpts.tailLines ?? -1,
    bytes: apiOpts.limitBytes ?? -1,
    sinceNs,
    follow: apiOpts.follow ?? false,
    timestamp: apiOpts.timestamps ?? false,
  };
}

// #region parse-cri-log
const timestampPattern = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** RFC3339NanoLenient: fewer than nine fraction digits and any zone are accepted. */
export function parseTimestampNs(text: string): bigint | undefined {
  const m = timestampPattern.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

/** RFC3339NanoFixed in UTC, as upstream's output: always nine fraction digits. */
export function formatTimestampNs(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const seconds = new Date(ms - (((ms % 1000) + 1000) % 1000)).toISOString().slice(0, 19);
  const fraction = (((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n).toString().padStart(9, "0");
  return `${seconds}.${fraction}Z`;
}

/**
 * parseCRILog: `<time> <stream> <tags> <content>`; the tags are `:`-separated, the first is P
 * or F. A partial line loses its line end here, which is what joins it to the next chunk.
 */
export function parseCRILog(line: Buffer): LogMessage | Error {
  const fields: string[] = [];
  let start = 0;
  for (let i = 0; i < 3; i++) {
    const space = line.indexOf(0x20, start);
    if (space < 0) {
      const what = ["timestamp", "stream type", "log tag"][i];
      return new Error(`${what} is not found`);
    }
    fields.push(line.subarray(start, space).toString());
    start = space + 1;
  }
  const [time, stream, tags] = fields as [string, string, string];
  const timestampNs = parseTimestampNs(time);
  if (timestampNs === undefined) return new Error(`unexpected timestamp format "${time}"`);
  if (stream !== "stdout" && stream !== "stderr") return new Error(`unexpected stream type "${stream}"`);
  let log = line.subarray(start);
  const partial = tags.split(":")[0] === LogTagPartial;
  if (partial && log.length > 0 && log[log.length - 1] === 0x0a) log = log.subarray(0, log.length - 1);
  return { timestampNs, stream, log };
}
// #endregion parse-cri-log

/**
 * FindTailLineStartIndex: the file offset where its last `n` lines begin, read backwards in
 * blocks so a large file is not read whole. A trailing line without "\n" counts as a line.
 */
export async function findTailLineStartIndex(f: FileHandle, n: number): Promise<number> {
  if (n < 0) return 0;
  const size = (await f.stat()).size;
  if (n === 0) return size;
  const block = 1024;
  let pos = size;
  let count = 0;
  while (pos > 0) {
    const len = Math.min(block, pos);
    pos -= len;
    const buf = Buffer.alloc(len);
    await f.read(buf, 0, len, pos);
    for (let i = len - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) continue;
      // The file's own last "\n" ends the last line; it does not start one.
      if (pos + i === size - 1) continue;
      count++;
      if (count === n) return pos + i + 1;
    }
  }
  return 0;
}

/** Where the reader's output goes; writes wait for the sink to drain (a slow client slows the reader). */
export interface LogSinks {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export interface ReadLogsDeps {
  /** The client went away: stop at once. */
  signal?: AbortSignal;
  /** Whether the container still runs (upstream asks the runtime's ContainerStatus). */
  isContainerRunning?: () => boolean | Promise<boolean>;
  /** Overrides upstream's 5 s state-check period (tests). */
  stateCheckPeriodMs?: number;
}

// #region read-logs
/**
 * ReadLogs: from the tail's start (or the beginning), each full line of the file is parsed,
 * filtered by `since`, prefixed with its time if asked, cut at `bytes` and written to its
 * stream. At the end of the file it returns — unless following, when it waits for the file to
 * grow (an incomplete last line is read again once complete) until the container stops.
 */
export async function readLogs(
  path: string,
  opts: LogOptions,
  sinks: LogSinks,
  deps: ReadLogsDeps = {},
): Promise<void> {
  const f = await open(path, "r");
  try {
    let position = await findTailLineStartIndex(f, opts.tail);
    const limit = { remaining: opts.bytes };
    let pending = Buffer.alloc(0);
    const chunk = Buffer.alloc(64 * 1024);
    for (;;) {
      if (deps.signal?.aborted) return;
      const { bytesRead } = await f.read(chunk, 0, chunk.length, position);
      position += bytesRead;
      pending =
        pending.length > 0
          ? Buffer.concat([pending, chunk.subarray(0, bytesRead)])
          : Buffer.from(chunk.subarray(0, bytesRead));
      let start = 0;
      for (let eol = pending.indexOf(0x0a); eol >= 0; eol = pending.indexOf(0x0a, start)) {
        const stop = await writeLine(pending.subarray(start, eol + 1), opts, sinks, limit);
        start = eol + 1;
        if (stop) return;
      }
      pending = pending.subarray(start);
      if (bytesRead > 0) continue;
      // End of the file.
      if (!opts.follow) {
        // Should stop after writing the remaining content (an incomplete last line too).
        if (pending.length > 0) await writeLine(pending, opts, sinks, limit);
        return;
      }
      const grew = await waitLogs(path, f, position, deps);
      if (grew === "stopped") return;
      if (grew === "exited") {
        // One last read: what the container wrote before it exited, then stop.
        opts = { ...opts, follow: false };
      }
    }
  } finally {
    await f.close();
  }
}
// #endregion read-logs

/** Writes one file line to its stream; true when the byte limit has been reached. */
async function writeLine(
  line: Buffer,
  opts: LogOptions,
  sinks: LogSinks,
  limit: { remaining: number },
): Promise<boolean> {
  const msg = parseCRILog(line);
  // upstream logs the error and skips the line: a corrupt line must not end the stream.
  if (msg instanceof Error) return false;
  if (opts.sinceNs > 0n && msg.timestampNs < opts.sinceNs) return false;
  let out = opts.timestamp
    ? Buffer.concat([Buffer.from(`${formatTimestampNs(msg.timestampNs)} `), msg.log])
    : msg.log;
  let reached = false;
  if (limit.remaining >= 0) {
    if (out.length >= limit.remaining) {
      out = out.subarray(0, limit.remaining);
      reached = true;
    }
    limit.remaining -= out.length;
  }
  if (out.length > 0) await writeTo(msg.stream === "stdout" ? sinks.stdout : sinks.stderr, out);
  return reached;
}

function writeTo(sink: NodeJS.WritableStream, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (sink.write(data)) resolve();
    else sink.once("drain", () => resolve());
  });
}

/**
 * waitLogs: resolves "exited" at once or after a state-check period when the container no longer
 * runs, "grew" when the file changes, "stopped" when the client went away.
 */
async function waitLogs(
  path: string,
  f: FileHandle,
  position: number,
  deps: ReadLogsDeps,
): Promise<"grew" | "exited" | "stopped"> {
  if (deps.signal?.aborted) return "stopped";
  // No need to wait if the container is not running (upstream asks first, then every period).
  if (deps.isContainerRunning && !(await deps.isContainerRunning())) return "exited";
  const period = deps.stateCheckPeriodMs ?? stateCheckPeriodMs;
  return new Promise((resolve) => {
    let done = false;
    let watcher: ReturnType<typeof watch> | undefined;
    let poll: NodeJS.Timeout | undefined;
    let check: NodeJS.Timeout | undefined;
    const finish = (why: "grew" | "exited" | "stopped") => {
      if (done) return;
      done = true;
      watcher?.close();
      clearInterval(poll);
      clearTimeout(check);
      deps.signal?.removeEventListener("abort", onAbort);
      resolve(why);
    };
    const onAbort = () => finish("stopped");
    deps.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      watcher = watch(path, () => finish("grew"));
      watcher.on("error", () => {});
    } catch {
      watcher = undefined; // the poll below still notices growth
    }
    // fs.watch can miss events (network file systems, macOS coalescing): a size poll backs it up.
    poll = setInterval(() => {
      void f.stat().then(
        (s) => s.size > position && finish("grew"),
        () => {},
      );
    }, 250);
    const stateCheck = async () => {
      const running = deps.isContainerRunning ? await deps.isContainerRunning() : true;
      if (!running) finish("exited");
      else if (!done) check = setTimeout(stateCheck, period);
    };
    check = setTimeout(stateCheck, period);
  });
}
