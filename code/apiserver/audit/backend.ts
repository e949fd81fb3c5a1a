/**
 * The log backend — writes each audit event as one line of JSON to a file (`--audit-log-path`),
 * or to standard output when the path is `-`. Upstream: k8s.io/apiserver
 * plugin/pkg/audit/log/backend.go (the json format) and pkg/server/options/audit.go.
 *
 * Solves: the audit log is a plain file of JSON lines any tool can tail, grep or ship; writing
 * each event before the request moves on (upstream's default "blocking" mode) means an event
 * is never lost in a buffer when the server stops.
 *
 * Invariants: one event, one line, `\n`-terminated; the file is opened for appending and
 * created with mode 0600 (audit logs hold secrets' metadata and, at Request level, bodies).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/plugin/pkg/audit/log/backend.go (backend.logEvent: FormatJson)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/audit.go (AuditLogOptions: "-" is stdout, the file's 0600)
 * @chapter 03-api-security
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Event } from "./event.ts";

// #region backend
export interface Backend {
  processEvents(...events: Event[]): void;
  shutdown(): void;
}

export function newLogBackend(path: string): Backend {
  if (path === "-") {
    return {
      processEvents: (...events) => {
        for (const ev of events) process.stdout.write(`${JSON.stringify(ev)}\n`);
      },
      shutdown: () => {},
    };
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number | undefined = openSync(path, "a", 0o600);
  return {
    processEvents(...events) {
      if (fd === undefined) return;
      for (const ev of events) writeSync(fd, `${JSON.stringify(ev)}\n`);
    },
    shutdown() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
// #endregion backend
