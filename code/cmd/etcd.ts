/**
 * etcd — the command: start one etcd member of the miniature, with etcd's own flag names.
 *
 * Solves:
 * - a learner (and the cluster script) starts our etcd exactly as they would start the real one,
 *   `etcd --name n1 --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls ...`, and
 *   points the real `etcdctl` at it;
 * - scripts wait for the same log line as for real etcd: a JSON line with
 *   `"msg":"ready to serve client requests"` (then one `serving client traffic insecurely` line
 *   per client address, with the port actually bound);
 * - what it acknowledged survives a restart, and a crash: the data lives in --data-dir, as etcd's
 *   (write-ahead log and snapshots in `<data-dir>/member/wal`; see code/store/wal/storage.ts);
 * - Ctrl-C or SIGTERM shuts down cleanly: open watch and keep-alive streams end, the gRPC server
 *   stops, every logged write is on disk and the WAL is closed, the process exits 0. If the WAL
 *   fails, the member stops and exits 1, as etcd does.
 *
 * Flags (Go's flag syntax, as etcd: `--flag=value`, `--flag value`, one dash or two):
 *   --name                    member name (default "default")
 *   --data-dir                data directory (default "<name>.etcd")
 *   --listen-client-urls      URLs to serve clients on (default http://localhost:2379)
 *   --advertise-client-urls   URLs to tell clients (default http://localhost:2379; required when
 *                             --listen-client-urls is set, as in etcd)
 *   --max-request-bytes       largest write request accepted (default 1572864 = 1.5 MiB)
 *   --snapshot-count          WAL records between two snapshots (default 10000; etcd's is 100000,
 *                             and was 10000 before v3.2); 0 means the default, as in etcd
 *   --in-memory               OURS, not etcd's: keep all data in memory, write nothing to disk
 *                             (tests and demos that want a fresh store on every start).
 *   --mend-authority          OURS, not etcd's: mend the HTTP/2 `:authority` that etcdctl 3.4's
 *                             `--cluster` flags send (a whole URL, which Node's HTTP/2 refuses);
 *                             see code/store/v3rpc/h2-authority.ts. `--mend-authority=false` off.
 * An unknown flag is an error (exit 2), as in etcd.
 *
 * What etcd does differently: it has many more flags (peers, TLS, auth, quotas, logging), reads
 * ETCD_* environment variables and a config file, and logs many more lines.
 *
 * @upstream etcd-io/etcd server/etcdmain/etcd.go (startEtcdOrProxyV2, startEtcd)
 * @upstream etcd-io/etcd server/etcdmain/config.go (newConfig, parse, flags)
 * @upstream etcd-io/etcd pkg/osutil/interrupt_unix.go (HandleInterrupts)
 * @chapter 01-etcd-watch
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { EmbedError, type EtcdConfig, startEtcd } from "../store/embed/etcd.ts";
import { jsonLogger, type Logger } from "../store/pkg/log.ts";
import { defaultMaxRequestBytes, defaultMendAuthority } from "../store/v3rpc/grpc.ts";
import { etcdVersion } from "../store/v3rpc/maintenance.ts";
import { defaultSnapshotCount } from "../store/wal/storage.ts";

const defaultClientURL = "http://localhost:2379";

/** What the flags ask for: a server to run, or a text to print. */
export type EtcdCommand = { run: Omit<EtcdConfig, "logger"> } | { print: string };

/** A bad command line; exit code 2, as Go's flag package. */
export class FlagError extends Error {
  override readonly name = "FlagError";
}

interface FlagSpec {
  help: string;
  bool?: boolean;
}

const flags: Record<string, FlagSpec> = {
  name: { help: 'human-readable name for this member (default "default")' },
  "data-dir": { help: 'path to the data directory (default "<name>.etcd")' },
  "listen-client-urls": {
    help: `list of URLs to listen on for client traffic (default ${defaultClientURL})`,
  },
  "advertise-client-urls": {
    help: `list of this member's client URLs to advertise (default ${defaultClientURL})`,
  },
  "max-request-bytes": { help: `maximum client request size in bytes (default ${defaultMaxRequestBytes})` },
  "snapshot-count": {
    help: `number of committed transactions to trigger a snapshot to disk (default ${defaultSnapshotCount})`,
  },
  "in-memory": { bool: true, help: "ours, not etcd's: keep everything in memory; write nothing to disk" },
  "mend-authority": {
    bool: true,
    help: `ours, not etcd's: accept the :authority etcdctl 3.4's --cluster sends (default ${defaultMendAuthority})`,
  },
  help: { bool: true, help: "show this help" },
  version: { bool: true, help: "print the version and exit" },
};

export const usage = [
  "Usage: etcd [flags]   (the course's miniature etcd)",
  "",
  ...Object.entries(flags).map(([name, spec]) => `  --${name.padEnd(24)}${spec.help}`),
].join("\n");

// #region parse-flags
/** Reads etcd's flags from argv (without the program name). */
export function parseEtcdFlags(argv: string[]): EtcdCommand | FlagError {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m || arg === "-" || arg === "--") {
      return new FlagError(`etcd: unexpected argument "${arg}": etcd takes only flags (see etcd --help)`);
    }
    const [, name, inline] = m;
    const spec = name === "h" ? flags.help : flags[name];
    if (!spec) {
      const known = Object.keys(flags)
        .map((f) => `--${f}`)
        .join(", ");
      return new FlagError(`etcd: unknown flag "--${name}": remove it; this etcd knows ${known}`);
    }
    const key = name === "h" ? "help" : name;
    if (spec.bool) {
      if (inline !== undefined && inline !== "true" && inline !== "false") {
        return new FlagError(
          `etcd: invalid boolean value "${inline}" for --${name}: use --${name} or --${name}=false`,
        );
      }
      given.set(key, inline ?? "true");
    } else if (inline !== undefined) {
      given.set(key, inline);
    } else if (i + 1 < argv.length) {
      given.set(key, argv[++i]);
    } else {
      return new FlagError(`etcd: flag needs an argument: --${name}`);
    }
  }

  if (given.get("help") === "true") return { print: usage };
  if (given.get("version") === "true")
    return { print: `etcd Version: ${etcdVersion} (the course's miniature)` };

  // etcd refuses to guess what to advertise when it was told where to listen.
  if (given.has("listen-client-urls") && !given.has("advertise-client-urls")) {
    return new FlagError(
      "etcd: --advertise-client-urls is required when --listen-client-urls is set explicitly: add --advertise-client-urls <url>",
    );
  }
  const maxRequestBytes = Number(given.get("max-request-bytes") ?? defaultMaxRequestBytes);
  if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes <= 0) {
    return new FlagError(
      `etcd: invalid value "${given.get("max-request-bytes")}" for --max-request-bytes: use a positive integer`,
    );
  }
  const snapshotCount = Number(given.get("snapshot-count") ?? defaultSnapshotCount);
  if (!Number.isSafeInteger(snapshotCount) || snapshotCount < 0) {
    return new FlagError(
      `etcd: invalid value "${given.get("snapshot-count")}" for --snapshot-count: use a non-negative integer`,
    );
  }
  const name = given.get("name") ?? "default";
  const urls = (flag: string) => (given.get(flag) ?? defaultClientURL).split(",").filter((u) => u !== "");
  return {
    run: {
      name,
      dataDir: given.get("data-dir") ?? `${name}.etcd`,
      inMemory: given.get("in-memory") === "true",
      mendAuthority: given.has("mend-authority") ? given.get("mend-authority") === "true" : undefined,
      listenClientURLs: urls("listen-client-urls"),
      advertiseClientURLs: urls("advertise-client-urls"),
      maxRequestBytes,
      // etcd replaces 0 with its default (and logs a warning).
      snapshotCount: snapshotCount === 0 ? defaultSnapshotCount : snapshotCount,
    },
  };
}
// #endregion parse-flags

// #region main
/** Where the command writes: the process's streams, or a test's buffers. */
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processIO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Runs etcd until SIGTERM or SIGINT; returns the exit code. Logs go to stderr, as etcd's. */
export async function main(argv: string[], io: CommandIO = processIO): Promise<number> {
  const cmd = parseEtcdFlags(argv);
  if (cmd instanceof FlagError) {
    io.stderr(`${cmd.message}\n`);
    return 2;
  }
  if ("print" in cmd) {
    io.stdout(`${cmd.print}\n`);
    return 0;
  }
  const log: Logger = jsonLogger(io.stderr, "etcd");
  // Listen for the signals before the ready line is written: a script that stops us as soon as
  // it reads that line would otherwise find no handler and kill us uncleanly (no WAL close).
  let onSignal: (s: NodeJS.Signals) => void = () => {};
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    onSignal = resolve;
  });
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  const etcd = await startEtcd({ ...cmd.run, logger: log });
  if (etcd instanceof EmbedError) {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    log("error", "failed to start etcd", { error: etcd.message });
    return 1;
  }
  const stop = await Promise.race([signal, etcd.failed]);
  if (stop instanceof EmbedError) {
    // The member has already stopped serving; wait for its shutdown to finish.
    await etcd.close();
    log("error", "etcd stopped", { error: stop.message });
    return 1;
  }
  log("info", "received signal; shutting down", {
    signal: stop === "SIGTERM" ? "terminated" : "interrupt",
  });
  await etcd.close();
  return 0;
}
// #endregion main

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
