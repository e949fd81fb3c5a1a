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
 * Flags, in Go's flag syntax as etcd reads them (`--flag=value`, `--flag value`, one dash or two;
 * cli/flag.ts), named as etcd's:
 * - `--name` (default "default") and `--data-dir` (default `<name>.etcd`);
 * - `--listen-client-urls` and `--advertise-client-urls` (default http://localhost:2379; the
 *   second is required when the first is set, as in etcd);
 * - `--max-request-bytes`: the largest write request accepted (default 1.5 MiB);
 * - `--snapshot-count`: WAL records between two snapshots (default 10000; etcd's is 100000, and
 *   was 10000 before v3.2); 0 means the default, as in etcd;
 * - `--in-memory`, ours, not etcd's: keep all data in memory and write nothing to disk (tests and
 *   demos that want a fresh store on every start).
 * An unknown flag is etcd's one-line error, and exit 2 (cli/run.ts).
 *
 * What etcd does differently: it has many more flags (peers, TLS, auth, quotas, logging), reads
 * ETCD_* environment variables and a config file, and logs many more lines.
 *
 * @upstream etcd-io/etcd server/etcdmain/etcd.go (startEtcdOrProxyV2, startEtcd)
 * @upstream etcd-io/etcd server/etcdmain/config.go (newConfig, parse, flags)
 * @chapter 01-etcd-watch
 */
import { EmbedError, type EtcdConfig, startEtcd } from "../store/embed/etcd.ts";
import { jsonLogger } from "../store/pkg/log.ts";
import { defaultMaxRequestBytes } from "../store/v3rpc/grpc.ts";
import { etcdVersion } from "../store/v3rpc/maintenance.ts";
import { defaultSnapshotCount } from "../store/wal/storage.ts";
import { boolFlag, FlagError, intFlag, listFlag, stringFlag } from "./cli/flag.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";
import { goSignalString } from "./cli/signal.ts";

export { FlagError } from "./cli/flag.ts";

const defaultClientURL = "http://localhost:2379";

// #region flags
const flags = {
  name: stringFlag("human-readable name for this member", "default"),
  "data-dir": stringFlag('path to the data directory (default "<name>.etcd")'),
  "listen-client-urls": listFlag(
    "list of URLs to listen on for client traffic",
    [defaultClientURL],
    "replace",
  ),
  "advertise-client-urls": listFlag(
    "list of this member's client URLs to advertise to the rest of the cluster",
    [defaultClientURL],
    "replace",
  ),
  "max-request-bytes": intFlag(
    "maximum client request size in bytes the server will accept",
    defaultMaxRequestBytes,
    {
      min: 1,
      hint: "use a positive integer",
    },
  ),
  "snapshot-count": intFlag(
    "number of committed transactions to trigger a snapshot to disk",
    defaultSnapshotCount,
    {
      min: 0,
      hint: "use a non-negative integer",
    },
  ),
  "in-memory": boolFlag("ours, not etcd's: keep everything in memory; write nothing to disk"),
};
// #endregion flags

// #region wiring
const etcd = command({
  name: "etcd",
  about: "the course's miniature etcd",
  syntax: "go",
  version: `etcd Version: ${etcdVersion} (the course's miniature)`,
  flags,
  options(f, given): Omit<EtcdConfig, "logger"> | FlagError {
    // etcd refuses to guess what to advertise when it was told where to listen.
    if (given.has("listen-client-urls") && !given.has("advertise-client-urls")) {
      return new FlagError(
        "etcd",
        "--advertise-client-urls is required when --listen-client-urls is set explicitly: add --advertise-client-urls <url>",
      );
    }
    return {
      name: f.name,
      dataDir: f["data-dir"] ?? `${f.name}.etcd`,
      inMemory: f["in-memory"],
      listenClientURLs: f["listen-client-urls"],
      advertiseClientURLs: f["advertise-client-urls"],
      maxRequestBytes: f["max-request-bytes"],
      // etcd replaces 0 with its default (and logs a warning).
      snapshotCount: f["snapshot-count"] === 0 ? defaultSnapshotCount : f["snapshot-count"],
    };
  },
  // Logs go to stderr as zap's JSON lines; embed logs the ready line itself, as etcd's serve.go does.
  async start(config, io) {
    const log = jsonLogger(io.stderr, "etcd");
    const member = await startEtcd({ ...config, logger: log });
    if (member instanceof EmbedError) {
      log("error", "failed to start etcd", { error: member.message });
      return undefined;
    }
    return {
      // A WAL that fails stops the member; wait for its shutdown to finish, then say why.
      failed: member.failed.then(async (err) => {
        await member.close();
        log("error", "etcd stopped", { error: err.message });
      }),
      async stop(signal) {
        log("info", "received signal; shutting down", { signal: goSignalString(signal) });
        await member.close();
      },
    };
  },
});
// #endregion wiring

/** Reads etcd's flags from argv (without the program name): a member to run, a text to print, or the error. */
export const parseEtcdFlags = (argv: string[]) => parseCommand(etcd, argv);

/** Runs etcd until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(etcd, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
