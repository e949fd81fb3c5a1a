/**
 * Shutdown signals — the first SIGINT or SIGTERM asks the command to stop cleanly; a second one
 * exits at once, with 1.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/signal.go.
 *
 * Solves:
 * - Ctrl-C (SIGINT) and `kill` (SIGTERM) must stop a component cleanly — open watches end, the
 *   store closes, every logged write is on disk — and then exit 0;
 * - a clean stop can hang (a client that never lets go, a disk that never answers): pressing
 *   Ctrl-C again must still give the learner their terminal back;
 * - tests run commands in their own process: listening must end with the command, or every test
 *   leaves listeners on `process` behind.
 *
 * Invariants:
 * - `received` settles once, with the first signal;
 * - after the first signal, the next SIGINT or SIGTERM calls `exit(1)` at once, waiting for nothing;
 * - after `stop()`, none of our listeners is left on the signal source.
 *
 * A wrapper that runs a command as its child must not forward a SIGINT that came from the
 * terminal: Ctrl-C already signals every process in the terminal's foreground group, the child
 * included, so forwarding it would make one Ctrl-C arrive twice — a clean stop, then at once an
 * exit that skips it (see scripts/chapter.ts).
 *
 * What upstream does differently: etcd's own HandleInterrupts runs its interrupt handlers on the
 * first signal and then kills itself with that same signal (etcd ends "killed by SIGTERM", not
 * with 0), and a second signal waits for the handlers. Our etcd uses the Kubernetes behaviour.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/signal.go (SetupSignalHandler, SetupSignalContext)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/signal_posix.go (shutdownSignals)
 * @upstream etcd-io/etcd pkg/osutil/interrupt_unix.go (HandleInterrupts)
 * @chapter 01-etcd-watch
 */

/** The signals that mean "shut down", as upstream's shutdownSignals. */
export const shutdownSignals = ["SIGINT", "SIGTERM"] as const;
type ShutdownSignal = (typeof shutdownSignals)[number];

/** Where signals come from: `process`, or a test's EventEmitter. */
export interface SignalSource {
  on(signal: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface SignalHandler {
  /** Settles with the first shutdown signal. */
  readonly received: Promise<NodeJS.Signals>;
  /** Stops listening: the command is done. */
  stop(): void;
}

// #region setup-signal-handler
/** Listens for SIGINT and SIGTERM: the first settles `received`, the second calls `exit(1)`. */
export function setupSignalHandler(
  options: { source?: SignalSource; exit?: (code: number) => void } = {},
): SignalHandler {
  const source = options.source ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let first = true;
  let settle: (signal: NodeJS.Signals) => void = () => {};
  const received = new Promise<NodeJS.Signals>((resolve) => {
    settle = resolve;
  });
  const listener = (signal: NodeJS.Signals) => {
    if (first) {
      first = false;
      settle(signal);
      return;
    }
    // The clean stop is still running, and someone wants out now.
    exit(1);
  };
  for (const s of shutdownSignals) source.on(s, listener);
  return {
    received,
    stop() {
      for (const s of shutdownSignals) source.off(s, listener);
    },
  };
}
// #endregion setup-signal-handler

/** A signal's name as Go's os.Signal prints it: etcd logs `"signal":"terminated"` for SIGTERM. */
export function goSignalString(signal: NodeJS.Signals): string {
  const names: Partial<Record<NodeJS.Signals, string>> = {
    SIGINT: "interrupt",
    SIGTERM: "terminated",
    SIGHUP: "hangup",
    SIGQUIT: "quit",
  };
  return names[signal] ?? signal;
}
