/**
 * The remote command protocol over WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`): how
 * `kubectl exec` carries stdin, stdout, stderr, terminal resizes and the exit status over one
 * connection. Mirrors kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/wsstream/conn.go.
 *
 * Solves: a command in a container has several streams and an exit code, but a WebSocket is one
 * ordered pipe of messages. Each binary message starts with a channel byte — 0 stdin, 1 stdout,
 * 2 stderr, 3 error (one Status at the end: Success, or the exit code), 4 resize (JSON
 * `{"Width":…,"Height":…}`) — and v5 adds 255, "close": `[255, 0]` from the client says stdin
 * has ended (v4 had no way to say it but closing everything).
 *
 * Invariants:
 * - the subprotocol is the first the client offers that we speak (v5, then v4); none is a 400
 *   before any upgrade;
 * - an empty message on the lowest writable channel tells the client the streams are ready;
 * - the error channel carries exactly one Status, written after stdout and stderr are drained,
 *   then the connection closes normally — `NonZeroExitCode` with cause `ExitCode` when the code
 *   is not 0, which kubectl turns into "command terminated with exit code N" and its own status;
 * - the client going away kills the command.
 *
 * What upstream does differently: the kubelet hands a SPDY or WebSocket connection to the
 * runtime's streaming server (CRI `Exec` returns its URL) and proxies to it; ours runs the
 * command through the runtime's StreamingRuntime and speaks the protocol itself. The base64
 * (`base64.channel.k8s.io`) and v1–v3 variants are not served: kubectl 1.32 offers v5 and v4.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go (StreamProtocolV5Name, NonZeroExitCodeReason, ExitCodeCauseType)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/wsstream/conn.go (the channel byte, handshake)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/remotecommand/websocket.go (createWebSocketStreams: the first empty message)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/remotecommand/httpstream.go (v4WriteStatusFunc)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/remotecommand/websocket.go (what kubectl sends and reads)
 * @chapter 07-kubelet
 */
import type { WebSocket } from "ws";
import type { ExecProcess } from "../runtime/cri.ts";

export const StreamProtocolV5Name = "v5.channel.k8s.io";
export const StreamProtocolV4Name = "v4.channel.k8s.io";
/** What this server speaks, in its order of preference. */
export const supportedStreamProtocols = [StreamProtocolV5Name, StreamProtocolV4Name];

export const stdinChannel = 0;
export const stdoutChannel = 1;
export const stderrChannel = 2;
export const errorChannel = 3;
export const resizeChannel = 4;
/** v5: the client closed one of its channels (`[255, id]`). */
export const closeChannel = 255;

export const NonZeroExitCodeReason = "NonZeroExitCode";
export const ExitCodeCauseType = "ExitCode";

/** The first protocol of the client's list we speak, or undefined. */
export function negotiateProtocol(offered: Iterable<string>): string | undefined {
  for (const p of offered) if (supportedStreamProtocols.includes(p)) return p;
  return undefined;
}

/** The options of an exec request (remotecommand.Options). */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The Status the error channel carries when a command ends (v4WriteStatusFunc). */
export function exitStatus(exitCode: number, cmd: string[]): object {
  if (exitCode === 0) return { metadata: {}, status: "Success" };
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${cmd.join(" ")}], exit code ${exitCode}`,
    reason: NonZeroExitCodeReason,
    details: { causes: [{ reason: ExitCodeCauseType, message: String(exitCode) }] },
  };
}

/** A Status for a command that could not run at all (the runtime refused it). */
export function internalErrorStatus(message: string): object {
  return { metadata: {}, status: "Failure", message, reason: "InternalError", code: 500 };
}

// #region exec-websocket
/**
 * Serves one exec over an upgraded connection: client messages go to stdin and resize, the
 * command's output to stdout and stderr, and the exit status to the error channel last.
 */
export async function serveExec(
  ws: WebSocket,
  protocol: string,
  opts: StreamOptions,
  cmd: string[],
  start: () => Promise<ExecProcess>,
): Promise<void> {
  const send = (channel: number, data: Buffer | string) =>
    new Promise<void>((resolve) => {
      if (ws.readyState !== ws.OPEN) return resolve();
      const payload = typeof data === "string" ? Buffer.from(data) : data;
      ws.send(Buffer.concat([Buffer.from([channel]), payload]), { binary: true }, () => resolve());
    });
  // The streams are ready: an empty message on the lowest channel the client will read.
  await send(opts.stdout ? stdoutChannel : opts.stderr ? stderrChannel : errorChannel, Buffer.alloc(0));

  let proc: ExecProcess;
  try {
    proc = await start();
  } catch (e) {
    await send(errorChannel, JSON.stringify(internalErrorStatus((e as Error).message)));
    ws.close(1000);
    return;
  }
  let clientGone = false;
  ws.on("close", () => {
    clientGone = true;
    proc.kill();
  });
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length === 0) return;
    const channel = data[0];
    const body = data.subarray(1);
    if (channel === stdinChannel && opts.stdin) proc.stdin?.write(body);
    else if (channel === resizeChannel && opts.tty) {
      try {
        const size = JSON.parse(body.toString()) as { Width?: number; Height?: number };
        proc.resize(size.Width ?? 0, size.Height ?? 0);
      } catch {
        // a malformed resize is ignored, as upstream logs and ignores it
      }
    } else if (channel === closeChannel && protocol === StreamProtocolV5Name && body[0] === stdinChannel) {
      proc.stdin?.end();
    }
  });
  const pump = (stream: NodeJS.ReadableStream | null, channel: number, wanted: boolean) =>
    new Promise<void>((resolve) => {
      if (!stream) return resolve();
      stream.on("data", (chunk: Buffer) => {
        if (!wanted) return;
        // Backpressure: stop reading while the socket's buffer drains.
        stream.pause();
        void send(channel, chunk).then(() => stream.resume());
      });
      stream.once("end", () => resolve());
      stream.once("error", () => resolve());
    });
  const drained = Promise.all([
    pump(proc.stdout, stdoutChannel, opts.stdout),
    pump(proc.stderr, stderrChannel, opts.stderr),
  ]);
  const code = await proc.exited;
  await drained;
  if (clientGone) return;
  await send(errorChannel, JSON.stringify(exitStatus(code, cmd)));
  ws.close(1000);
}
// #endregion exec-websocket
