/**
 * kube-apiserver — the command: start the miniature API server with upstream's flag names, and
 * point kubectl at it. Upstream: NewAPIServerCommand in cmd/kube-apiserver/app/server.go.
 *
 * Solves:
 * - a learner starts it as they would start the real one (`kube-apiserver
 *   --etcd-servers=http://127.0.0.1:2379`), or with no etcd at all: without `--etcd-servers` the
 *   objects live in an embedded store in the same process (chapter 1's), in memory or, with
 *   `--data-dir`, on disk;
 * - scripts wait for one ready line naming the URL to give kubectl
 *   (`Serving insecurely on 127.0.0.1:8080`, as the pre-1.20 insecure port logged it);
 * - Ctrl-C or SIGTERM shuts down cleanly: open watches end, the storage closes, exit 0;
 * - a bad flag is one line that says what to do, exit 2 (Go's flag package convention).
 *
 * Flags (`--flag=value` or `--flag value`), named as upstream's (the insecure ones as before 1.20):
 * - `--etcd-servers`: comma-separated etcd URLs; absent: the embedded store;
 * - `--data-dir` (ours, not upstream's): where the embedded store keeps its data (absent: in
 *   memory, lost on exit); ignored with `--etcd-servers`;
 * - `--insecure-port` (default 8080; 0 picks a free port) and `--insecure-bind-address` (default
 *   127.0.0.1): where to serve plain HTTP;
 * - `--watch-cache`: serve lists and watches from the watch cache (default true);
 * - `--etcd-compaction-interval`: how often etcd's history is compacted, a Go duration (default
 *   5m0s; 0 never compacts);
 * - `-v`, `--v`: log level; 3 or more logs one line per request (upstream's httplog level). The
 *   default is 3, not upstream's 0, which would hide the requests this course wants you to watch.
 *
 * What upstream does differently: it serves only HTTPS (`--secure-port`, certificates,
 * authentication — chapter 3), and has some hundred more flags.
 *
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/server.go (NewAPIServerCommand, Run)
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/options/options.go (ServerRunOptions)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/etcd.go (--etcd-servers, --watch-cache)
 * @chapter 02-apiserver
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type APIServerOptions, startAPIServer } from "../apiserver/server.ts";

/** A bad command line; exit code 2. */
export class FlagError extends Error {
  override readonly name = "FlagError";
}

interface FlagSpec {
  help: string;
  bool?: boolean;
}

const flags: Record<string, FlagSpec> = {
  "etcd-servers": { help: "comma-separated etcd URLs (absent: the embedded store, in this process)" },
  "data-dir": { help: "ours, not upstream's: data directory of the embedded store (absent: in memory)" },
  "insecure-port": { help: "port to serve plain HTTP on (default 8080; 0 picks a free port)" },
  "insecure-bind-address": { help: "address to serve plain HTTP on (default 127.0.0.1)" },
  "watch-cache": { bool: true, help: "serve lists and watches from the watch cache (default true)" },
  "etcd-compaction-interval": {
    help: "how often to compact etcd's history, e.g. 5m0s, 30s (default 5m0s; 0 never)",
  },
  v: { help: "log level: 3 or more logs every request (default 3)" },
  help: { bool: true, help: "show this help" },
};

export const usage = [
  "Usage: kube-apiserver [flags]   (the course's miniature API server)",
  "",
  ...Object.entries(flags).map(([name, spec]) => `  --${name.padEnd(24)}${spec.help}`),
].join("\n");

export type APIServerCommand = { run: APIServerOptions & { verbosity: number } } | { print: string };

// #region parse-flags
export function parseAPIServerFlags(argv: string[]): APIServerCommand | FlagError {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m || arg === "-" || arg === "--") {
      return new FlagError(
        `kube-apiserver: unexpected argument "${arg}": kube-apiserver takes only flags (see --help)`,
      );
    }
    const [, raw, inline] = m;
    const name = raw === "h" ? "help" : raw;
    const spec = flags[name];
    if (!spec) {
      return new FlagError(
        `kube-apiserver: unknown flag: --${raw}: remove it; this kube-apiserver knows ${Object.keys(flags)
          .map((f) => `--${f}`)
          .join(", ")}`,
      );
    }
    if (spec.bool) {
      if (inline !== undefined && inline !== "true" && inline !== "false") {
        return new FlagError(
          `kube-apiserver: invalid argument "${inline}" for --${name}: use --${name} or --${name}=false`,
        );
      }
      given.set(name, inline ?? "true");
    } else if (inline !== undefined) {
      given.set(name, inline);
    } else if (i + 1 < argv.length) {
      given.set(name, argv[++i]);
    } else {
      return new FlagError(`kube-apiserver: flag needs an argument: --${name}`);
    }
  }
  if (given.get("help") === "true") return { print: usage };

  const port = Number(given.get("insecure-port") ?? "8080");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return new FlagError(
      `kube-apiserver: invalid argument "${given.get("insecure-port")}" for --insecure-port: use a port number from 0 to 65535`,
    );
  }
  const verbosity = Number(given.get("v") ?? "3");
  if (!Number.isInteger(verbosity) || verbosity < 0) {
    return new FlagError(
      `kube-apiserver: invalid argument "${given.get("v")}" for --v: use a non-negative integer`,
    );
  }
  const compaction = parseDuration(given.get("etcd-compaction-interval") ?? "5m0s");
  if (compaction === undefined) {
    return new FlagError(
      `kube-apiserver: invalid argument "${given.get("etcd-compaction-interval")}" for --etcd-compaction-interval: use a duration such as 5m0s, 90s or 0`,
    );
  }
  const etcdServers = (given.get("etcd-servers") ?? "").split(",").filter((s) => s !== "");
  for (const url of etcdServers) {
    if (!/^https?:\/\/[^/]+/.test(url)) {
      return new FlagError(
        `kube-apiserver: invalid --etcd-servers URL "${url}": write it as http://host:port (e.g. --etcd-servers=http://127.0.0.1:2379)`,
      );
    }
  }
  return {
    run: {
      etcdServers: etcdServers.length > 0 ? etcdServers : undefined,
      dataDir: etcdServers.length > 0 ? undefined : given.get("data-dir"),
      insecurePort: port,
      insecureBindAddress: given.get("insecure-bind-address") ?? "127.0.0.1",
      watchCache: given.get("watch-cache") !== "false",
      compactionIntervalMs: compaction,
      verbosity,
    },
  };
}
// #endregion parse-flags

/** A Go duration as flags take it (`5m0s`, `1h`, `90s`, `500ms`, `0`), in milliseconds. */
export function parseDuration(text: string): number | undefined {
  if (text === "0") return 0;
  const units: Record<string, number> = {
    h: 3_600_000,
    m: 60_000,
    s: 1000,
    ms: 1,
    us: 0.001,
    µs: 0.001,
    ns: 1e-6,
  };
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let pos = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]];
    pos = re.lastIndex;
  }
  return pos === text.length && text.length > 0 ? Math.round(total) : undefined;
}

// #region main
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processIO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Runs the API server until SIGTERM or SIGINT; returns the exit code. Logs go to stderr, as klog's. */
export async function main(argv: string[], io: CommandIO = processIO): Promise<number> {
  const cmd = parseAPIServerFlags(argv);
  if (cmd instanceof FlagError) {
    io.stderr(`${cmd.message}\n`);
    return 2;
  }
  if ("print" in cmd) {
    io.stdout(`${cmd.print}\n`);
    return 0;
  }
  const { verbosity, ...options } = cmd.run;
  const log = verbosity >= 3 ? (line: string) => io.stderr(`${line}\n`) : undefined;
  let server: Awaited<ReturnType<typeof startAPIServer>>;
  try {
    server = await startAPIServer({ ...options, log });
  } catch (e) {
    io.stderr(`kube-apiserver: failed to start: ${(e as Error).message}\n`);
    return 1;
  }
  const storage = options.etcdServers
    ? `etcd ${options.etcdServers.join(",")}`
    : options.dataDir
      ? `embedded store in ${options.dataDir}`
      : "embedded store in memory";
  io.stderr(`Serving insecurely on ${server.url.replace(/^http:\/\//, "")} (storage: ${storage})\n`);
  const signal = await new Promise<NodeJS.Signals>((done) => {
    process.once("SIGTERM", () => done("SIGTERM"));
    process.once("SIGINT", () => done("SIGINT"));
  });
  io.stderr(`Received ${signal}; shutting down\n`);
  await server.close();
  return 0;
}
// #endregion main

/** Whether node was started on this file (not a test importing it); realpath, so a symlink matches. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(resolve(script))).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) process.exitCode = await main(process.argv.slice(2));
