/**
 * The CRI log writer — turns a container's stdout and stderr into the kubelet's log file format,
 * one line per chunk: `<RFC3339Nano time> <stdout|stderr> <F|P> <content>`.
 * Mirrors upstream's containerd/containerd internal/cri/io/logger.go.
 *
 * Solves:
 * - `kubectl logs` must show both streams interleaved in the order they were written, with the
 *   time of each line (`--timestamps`, `--since`): the runtime stamps every line as it writes it,
 *   and one file holds both streams, each line tagged with its stream.
 * - a line too long to keep in memory must not stall or crash the writer: past
 *   maxContainerLogLineSize it is cut into partial lines (tag P) that the reader joins back;
 *   the last piece of a line gets tag F.
 *
 * Invariants:
 * - every line of the file ends with "\n" and has exactly three spaces before its content;
 *   content never contains "\n" ("\r\n" line ends lose their "\r", as containerd's readLine does).
 * - content is written only once a line is complete, the buffer is full, or the stream ends;
 *   at the end a remainder without "\n" is written as a partial line (P), as containerd does at EOF.
 * - the time has nine fractional digits and a "Z" (Go's RFC3339Nano with fixed width, containerd's
 *   timestampFormat), so lines sort as text.
 *
 * Departure: sizes are counted in UTF-16 characters, not bytes.
 *
 * @upstream containerd/containerd internal/cri/io/logger.go (redirectLogs, readLine, timestampFormat)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go (parseCRILog: the format the reader expects)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/constants.go (LogTagPartial, LogTagFull)
 * @chapter 07-kubelet
 */

export type LogStream = "stdout" | "stderr";
export const LogTagPartial = "P";
export const LogTagFull = "F";

/** containerd's default max_container_log_line_size: 16 KiB. */
export const maxContainerLogLineSize = 16 * 1024;

/** `2026-12-07T03:27:24.123456789Z` for a time in (fractional) milliseconds since the epoch. */
export function rfc3339Nano(epochMs: number): string {
  const ms = Math.floor(epochMs);
  const iso = new Date(ms).toISOString(); // …T03:27:24.123Z
  const subMsNanos = Math.floor((epochMs - ms) * 1e6);
  return `${iso.slice(0, 23)}${String(subMsNanos).padStart(6, "0")}Z`;
}

// #region cri-log-line
/** One line of a CRI log file. */
export function formatCRILogLine(
  time: string,
  stream: LogStream,
  tag: typeof LogTagFull | typeof LogTagPartial,
  content: string,
): string {
  return `${time} ${stream} ${tag} ${content}\n`;
}

/**
 * The writer of one stream: `write` takes chunks as the program wrote them, `end` flushes the
 * remainder. `emit` receives whole log-file lines.
 */
export class CRILogWriter {
  private buffered = "";

  constructor(
    private readonly stream: LogStream,
    private readonly emit: (line: string) => void,
    private readonly now: () => number = () => performance.timeOrigin + performance.now(),
    private readonly maxLen = maxContainerLogLineSize,
  ) {}

  write(chunk: string): void {
    this.buffered += chunk;
    for (;;) {
      const nl = this.buffered.indexOf("\n");
      if (nl >= 0 && nl <= this.maxLen) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.line(LogTagFull, line.endsWith("\r") ? line.slice(0, -1) : line);
      } else if (this.buffered.length > this.maxLen) {
        // A line longer than the limit goes out in limit-sized partial pieces.
        this.line(LogTagPartial, this.buffered.slice(0, this.maxLen));
        this.buffered = this.buffered.slice(this.maxLen);
      } else return;
    }
  }

  /** The stream ended: what is left had no "\n", so it is a partial line. */
  end(): void {
    if (this.buffered.length > 0) this.line(LogTagPartial, this.buffered);
    this.buffered = "";
  }

  private line(tag: typeof LogTagFull | typeof LogTagPartial, content: string): void {
    this.emit(formatCRILogLine(rfc3339Nano(this.now()), this.stream, tag, content));
  }
}
// #endregion cri-log-line
