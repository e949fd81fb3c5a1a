/**
 * pki — the command: make (or complete, or check) the cluster's PKI directory, the way
 * `kubeadm init phase certs all` and `kubeadm init phase kubeconfig all` do, in one run:
 * `npm run pki -- --dir DIR [--nodes a,b,c] [--server URL] [--apiserver-cert-extra-sans IP,NAME]
 * [--force]`. Upstream: kubeadm's
 * cmd/kubeadm/app/cmd/phases/init/certs.go and kubeconfig.go.
 *
 * Solves:
 * - a learner gets every certificate, key and kubeconfig chapter 3's secured API server and the
 *   later components need, in the fixed layout of code/pki/certlist.ts, without openssl;
 * - running it again is safe: what is there and right is kept, what is missing is made, what is
 *   wrong stops the run with the file and the fix (code/pki/certs.ts); `--force` makes all anew;
 * - one progress line per file, in kubeadm's words (`[certs] Generating "ca" certificate and
 *   key`), then where to point the API server and kubectl.
 *
 * Exit codes: 0 done; 1 the directory cannot be used as it is (one line: the file and the fix);
 * 2 a bad command line (one line, as every command of code/cmd/).
 *
 * What upstream does differently: kubeadm writes to /etc/kubernetes/pki and /etc/kubernetes/*.conf,
 * names kubeconfigs `admin.conf`, `scheduler.conf`…, and makes an etcd and a front-proxy CA too.
 *
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/cmd/phases/init/certs.go (NewCertsPhase: "[certs] Using certificateDir folder")
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/cmd/phases/init/kubeconfig.go (NewKubeConfigPhase)
 * @chapter 03-api-security
 */
import { relative, resolve } from "node:path";
import { DefaultNodes, DefaultServer } from "../pki/certlist.ts";
import { ensurePKI, validateOptions } from "../pki/certs.ts";
import { PKIError } from "../pki/errors.ts";
import { boolFlag, FlagError, listFlag, stringFlag } from "./cli/flag.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";

// #region flags
const flags = {
  dir: stringFlag("the PKI directory (made if missing)"),
  // The issue's fixed layout: the id is `node-` + the name, so the default node (node-1) is
  // node-node-1.crt, .key and .kubeconfig, with CN system:node:node-1.
  nodes: listFlag(
    "node names, each a kubelet identity node-<name> (so node-1 is node-node-1.*)",
    [...DefaultNodes],
    "append",
  ),
  server: stringFlag("the API server URL every kubeconfig points at", DefaultServer),
  // kubeadm init's flag, word for word: a host name in --server needs to be one of these names.
  "apiserver-cert-extra-sans": listFlag(
    "Optional extra Subject Alternative Names (SANs) to use for the API Server serving certificate. Can be both IP addresses and DNS names.",
    [],
    "append",
  ),
  force: boolFlag("make every key and certificate again (invalidates every credential made before)"),
};
// #endregion flags

interface PKIOptions {
  dir: string;
  nodes: string[];
  server: string;
  apiServerCertExtraSANs: string[];
  force: boolean;
}

// #region wiring
const pki = command({
  name: "pki",
  about: "make the cluster's CA, certificates, keys and kubeconfigs",
  syntax: "pflag",
  flags,
  options(f): PKIOptions | FlagError {
    if (!f.dir) return new FlagError("pki", "--dir is required (e.g. npm run pki -- --dir ./pki)");
    if (f.nodes.length === 0)
      return new FlagError("pki", "--nodes needs at least one node name (e.g. --nodes node-1)");
    const extraSANs = f["apiserver-cert-extra-sans"];
    const invalid = validateOptions(f.nodes, f.server, extraSANs);
    if (invalid) return new FlagError("pki", invalid.message);
    return {
      dir: f.dir,
      nodes: f.nodes,
      server: f.server,
      apiServerCertExtraSANs: extraSANs,
      force: f.force,
    };
  },
  async start(opts, io) {
    io.stdout(`[certs] Using certificateDir folder "${opts.dir}"\n`);
    const result = await ensurePKI({ ...opts, onProgress: (line) => io.stdout(`${line}\n`) }).catch(
      (e: Error) => new PKIError("Unreadable", e.message),
    );
    if (result instanceof PKIError) {
      io.stderr(`pki: ${result.message}\n`);
      return undefined;
    }
    for (const warning of result.warnings) io.stderr(`pki: warning: ${warning}\n`);
    // A path under the working directory as the learner would type it; elsewhere, absolute.
    const at = (path: string) => {
      const rel = relative(process.cwd(), resolve(path));
      return rel.startsWith("..") ? resolve(path) : rel;
    };
    const admin = result.layout.identities.find((i) => i.id === "admin");
    io.stdout(
      [
        `[pki] ${result.written.length} files written, ${result.kept.length} kept`,
        `[pki] kube-apiserver --tls-cert-file=${at(result.layout.apiServerCert)} --tls-private-key-file=${at(result.layout.apiServerKey)} --client-ca-file=${at(result.layout.caCert)} --kubelet-client-certificate=${at(result.layout.apiServerKubeletClientCert)} --kubelet-client-key=${at(result.layout.apiServerKubeletClientKey)}`,
        `[pki] export KUBECONFIG=${admin ? resolve(admin.kubeconfig) : ""}`,
        "",
      ].join("\n"),
    );
    return { stop: async () => {}, done: Promise.resolve() };
  },
});
// #endregion wiring

/** Reads pki's flags from argv (without the program name). */
export const parsePKIFlags = (argv: string[]) => parseCommand(pki, argv);

/** Makes the PKI directory; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(pki, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
