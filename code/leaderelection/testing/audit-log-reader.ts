/**
 * The API server's audit log, read as it is written — the leader-election benchmark's count of
 * every Lease and ConfigMap request, and its clock for when each was served.
 *
 * Solves: the benchmark must count the requests the API server *served*, not the ones clients
 * think they sent, and must time the new leader's first action where it lands. kube-apiserver
 * with `--audit-log-path -` writes one audit.k8s.io/v1 Event a line to its standard output; this
 * keeps the ResponseComplete ones, in order, and wakes whoever waits for a condition on them.
 *
 * Invariants: `calls` only grows, in the order the server wrote the events; a candidate is named
 * by its User-Agent `leaderelection-bench/<id>`, anything else by its whole User-Agent.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go (Event, Stage ResponseComplete)
 * @chapter 06-leader-election
 */
import type { ChildProcess } from "node:child_process";

/** The User-Agent prefix of every benchmark client; the rest is the candidate's identity. */
export const agentPrefix = "leaderelection-bench/";

/** One request the API server served, from its ResponseComplete audit event. */
export interface Call {
  /** stageTimestamp in ms since the epoch (fractional: the event has microseconds). */
  at: number;
  verb: string;
  resource: string;
  name: string;
  /** The candidate's identity (from `leaderelection-bench/<id>`), or the whole User-Agent. */
  who: string;
  code: number;
}

/** MicroTime (`…T01:02:03.456789Z`) to fractional ms since the epoch. */
function microTimeMs(s: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(s);
  if (!m) return Number.NaN;
  return Date.parse(`${m[1]}Z`) + Number(`0.${m[2] ?? "0"}`) * 1000;
}

/** The wall clock as the API server stamps its audit events (ms, fractional; event.ts nowMicros). */
export const wallNow = () => performance.timeOrigin + performance.now();

export class AuditLog {
  readonly calls: Call[] = [];
  private partial = "";
  private listeners = new Set<() => void>();

  constructor(child: ChildProcess) {
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => this.feed(chunk));
  }

  private feed(chunk: string): void {
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      const ev = JSON.parse(line) as {
        stage: string;
        verb: string;
        userAgent?: string;
        objectRef?: { resource?: string; name?: string };
        responseStatus?: { code?: number };
        stageTimestamp: string;
      };
      if (ev.stage !== "ResponseComplete") continue;
      const ua = ev.userAgent ?? "";
      this.calls.push({
        at: microTimeMs(ev.stageTimestamp),
        verb: ev.verb,
        resource: ev.objectRef?.resource ?? "",
        name: ev.objectRef?.name ?? "",
        who: ua.startsWith(agentPrefix) ? ua.slice(agentPrefix.length) : ua,
        code: ev.responseStatus?.code ?? 0,
      });
    }
    for (const l of [...this.listeners]) l();
  }

  /** Resolves with `check()`'s first value, asked now and after every new audit line. */
  until<T>(what: string, check: () => T | undefined, ms: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const done = (f: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(look);
        f();
      };
      const look = () => {
        const v = check();
        if (v !== undefined) done(() => resolve(v));
      };
      const timer = setTimeout(
        () =>
          done(() => reject(new Error(`timed out after ${(ms / 1000).toFixed(1)} s waiting for ${what}`))),
        ms,
      );
      this.listeners.add(look);
      look();
    });
  }

  /** The first call at index ≥ `from` that matches. */
  find(from: number, match: (c: Call) => boolean): { call: Call; index: number } | undefined {
    for (let i = from; i < this.calls.length; i++)
      if (match(this.calls[i])) return { call: this.calls[i], index: i };
    return undefined;
  }
}
