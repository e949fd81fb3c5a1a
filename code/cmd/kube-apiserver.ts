/**
 * kube-apiserver — the command: start the miniature API server with upstream's flag names, and
 * point kubectl at it. Upstream: NewAPIServerCommand in cmd/kube-apiserver/app/server.go.
 *
 * Solves:
 * - a learner starts it as they would start the real one (`kube-apiserver
 *   --etcd-servers=http://127.0.0.1:2379`), or with no etcd at all: without `--etcd-servers` the
 *   objects live in an embedded store in the same process (chapter 1's), in memory or, with
 *   `--data-dir`, on disk;
 * - scripts wait for one ready line naming the URL to give kubectl (`Serving securely on
 *   127.0.0.1:6443`, upstream's words; `Serving insecurely on 127.0.0.1:8080` before it when the
 *   insecure port is asked for, as the pre-1.20 insecure port logged it);
 * - Ctrl-C or SIGTERM shuts down cleanly: open watches end, the storage closes, exit 0;
 * - a bad flag is upstream's one-line error (`unknown flag: --secure-port`), exit 2 (cli/run.ts).
 *
 * Flags, in pflag's syntax as every Kubernetes component reads them (`--flag=value`, `--flag
 * value`, shorthands such as `-v 3`; cli/flag.ts), named as upstream's (the insecure ones as
 * before 1.20):
 * - `--etcd-servers`: etcd URLs, comma-separated or repeated; absent: the embedded store;
 * - `--data-dir` (ours, not upstream's): where the embedded store keeps its data (absent: in
 *   memory, lost on exit); ignored with `--etcd-servers`;
 * - `--insecure-port` (default 8080; 0 picks a free port) and `--insecure-bind-address` (default
 *   127.0.0.1): where to serve plain HTTP — only when `--insecure-port` is given. Given alone
 *   (no flag of the secure port or of authentication), it is chapter 2's server: plain HTTP only;
 * - chapter 3: `--secure-port` (default 6443; 0 picks a free port), `--bind-address` (default
 *   127.0.0.1), `--tls-cert-file`/`--tls-private-key-file` or a self-signed certificate (kept in
 *   `--cert-dir`, else in memory), and authentication: `--client-ca-file`, `--token-auth-file`,
 *   `--anonymous-auth` (default true; turned off, with upstream's warning, under AlwaysAllow —
 *   which is the default mode — see applyAuthorization);
 * - `--watch-cache`: serve lists and watches from the watch cache (default true);
 * - `--etcd-compaction-interval`: how often etcd's history is compacted, a Go duration (default
 *   5m0s; 0 never compacts);
 * - `-v`, `--v`: log level; 3 or more logs one line per request (upstream's httplog level). The
 *   default is 3, not upstream's 0, which would hide the requests this course wants you to watch;
 * - `--version`: prints `Kubernetes v1.32.0`, as upstream's verflag;
 * - chapter 3, service-account tokens: `--service-account-signing-key-file` (signs),
 *   `--service-account-key-file` and `--service-account-issuer` (repeatable; verify and accept),
 *   `--api-audiences` (default: the first issuer), `--service-account-max-token-expiration`,
 *   `--service-account-extend-token-expiration`; with them, `kubectl create token` works.
 *   Upstream requires the first three; here none given means no tokens (chapters 1–2).
 * - `--audit-policy-file` and `--audit-log-path` (chapter 3): the audit.k8s.io/v1 Policy and the
 *   file of JSON lines it writes to (`-`: standard output); auditing is on only with both.
 * - chapter 3: `--enable-admission-plugins`, `--disable-admission-plugins` (comma-separated
 *   plugin names, added to / taken from the defaults), `--default-not-ready-toleration-seconds`
 *   and `--default-unreachable-toleration-seconds` (300). Any of them turns admission on.
 * - chapter 8: `--tracing-config-file`: a TracingConfiguration (apiserver.config.k8s.io/v1beta1;
 *   `endpoint`, `samplingRatePerMillion`); spans go as OTLP/HTTP to the endpoint (upstream: OTLP
 *   over gRPC, default localhost:4317). Absent: no tracing (upstream's APIServerTracing gate is on
 *   by default, but with no file nothing is exported either).
 * - chapter 7: `--kubelet-client-certificate`/`--kubelet-client-key` (given together: what the
 *   API server shows a kubelet when it proxies logs and exec), `--kubelet-certificate-authority`
 *   (absent: the kubelet's serving certificate is not verified, as upstream) and
 *   `--kubelet-preferred-address-types` (upstream's default Hostname,InternalDNS,InternalIP,
 *   ExternalDNS,ExternalIP; kubeadm passes InternalIP,ExternalIP,Hostname, which kubelets on one
 *   machine need: their Hostname addresses, the node names, do not resolve).
 *
 * What upstream does differently: since 1.20 it serves only HTTPS (no `--insecure-port`); its
 * `--secure-port` cannot be 0, `--bind-address` defaults to 0.0.0.0 and `--cert-dir` to
 * /var/run/kubernetes; its
 * admission chain is always on (ours needs an admission flag); and it has some hundred more flags.
 *
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/server.go (NewAPIServerCommand, Run)
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/options/options.go (ServerRunOptions)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/etcd.go (--etcd-servers, --watch-cache)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/audit.go (--audit-policy-file, --audit-log-path)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/serving.go (--secure-port, --bind-address, --cert-dir, --tls-cert-file)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/authentication.go (--client-ca-file, --token-auth-file, --anonymous-auth, ApplyAuthorization)
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/options/options.go (chapter 7: the --kubelet-* flags)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/tracing.go (chapter 8: --tracing-config-file)
 * @chapter 02-apiserver
 */

import { readFileSync } from "node:fs";
import { type AdmissionOptions, enabledPluginNames } from "../apiserver/admission/plugins.ts";
import { newLogBackend } from "../apiserver/audit/backend.ts";
import { loadPolicy } from "../apiserver/audit/policy.ts";
import type { Auditor } from "../apiserver/audit/request.ts";
import { serviceAccountConfigFromFlags } from "../apiserver/authn/serviceaccount/options.ts";
import {
  authorizationModeChoices,
  defaultAuthorizationModes,
  validateAuthorizationModes,
} from "../apiserver/authz/config.ts";
import { versionInfo } from "../apiserver/discovery.ts";
import {
  DefaultPreferredAddressTypes,
  type KubeletClientConfig,
} from "../apiserver/registry/subresources/kubelet-client.ts";
import { type APIServerOptions, startAPIServer } from "../apiserver/server.ts";
import type { TracingConfiguration } from "../tracing/config.ts";
import { newProvider } from "../tracing/provider.ts";
import {
  boolFlag,
  durationFlag,
  FlagError,
  type FlagValues,
  intFlag,
  listFlag,
  stringFlag,
} from "./cli/flag.ts";
import { type CommandIO, command, isEntryPoint, parseCommand, run } from "./cli/run.ts";
import { readTracingConfigFlag, tracingConfigFileFlag } from "./cli/tracing-flags.ts";

export { FlagError } from "./cli/flag.ts";

// #region flags
const flags = {
  "etcd-servers": listFlag(
    "etcd URLs, comma-separated (absent: the embedded store, in this process)",
    [],
    "append",
  ),
  "data-dir": stringFlag("ours, not upstream's: data directory of the embedded store (absent: in memory)"),
  "insecure-port": intFlag("port to serve plain HTTP on; 0 picks a free port", 8080, {
    min: 0,
    max: 65535,
    hint: "use a port number from 0 to 65535",
  }),
  "insecure-bind-address": stringFlag("address to serve plain HTTP on", "127.0.0.1"),
  "watch-cache": boolFlag("serve lists and watches from the watch cache", true),
  "etcd-compaction-interval": durationFlag("how often to compact etcd's history; 0 never", 300_000, {
    min: 0,
    hint: "use a duration such as 5m0s, 90s or 0",
  }),
  // chapter 3: RBAC — authorization
  "authorization-mode": listFlag(
    `Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow if --authorization-config is not used. Comma-delimited list of: ${authorizationModeChoices.join(",")}.`,
    [],
    "replace",
  ),
  // chapter 3: admission
  "enable-admission-plugins": listFlag(
    "admission plugins to enable besides the default ones (any of these flags turns admission on)",
    [],
    "append",
  ),
  "disable-admission-plugins": listFlag("default admission plugins to disable", [], "append"),
  "default-not-ready-toleration-seconds": intFlag(
    "tolerationSeconds of the not-ready:NoExecute toleration added to every pod without one",
    300,
    { min: 0, hint: "use a non-negative integer" },
  ),
  "default-unreachable-toleration-seconds": intFlag(
    "tolerationSeconds of the unreachable:NoExecute toleration added to every pod without one",
    300,
    { min: 0, hint: "use a non-negative integer" },
  ),
  v: {
    ...intFlag("log level: 3 or more logs every request", 3, { min: 0, hint: "use a non-negative integer" }),
    shorthand: "v",
  },
  // chapter 3: service-account tokens
  "service-account-key-file": listFlag(
    "PEM file of public (or private) keys that verify service-account tokens; repeatable",
    [],
    "append",
  ),
  "service-account-issuer": listFlag(
    "issuer of service-account tokens; the first signs, every one listed is accepted; repeatable",
    [],
    "append",
  ),
  "api-audiences": listFlag("audiences a token must be for (default: the first issuer)", [], "replace"),
  "service-account-signing-key-file": stringFlag(
    "PEM file of the private key that signs service-account tokens",
  ),
  "service-account-max-token-expiration": durationFlag(
    "the longest token a TokenRequest gets; 0: no limit",
    0,
    {
      min: 0,
      hint: "use a duration such as 24h or 0",
    },
  ),
  "service-account-extend-token-expiration": boolFlag(
    "give pod-bound tokens of 3607 seconds a year, warning after the hour",
    true,
  ),
  // chapter 8: tracing
  "tracing-config-file": tracingConfigFileFlag(false),
  // chapter 3: audit
  "audit-policy-file": stringFlag("path to the file that defines the audit policy configuration"),
  "audit-log-path": stringFlag(
    "if set, all requests coming to the apiserver will be logged to this file; '-' means standard out",
  ),
  // chapter 3: serving and authentication.
  "secure-port": intFlag("port to serve HTTPS on; 0 picks a free port", 6443, {
    min: 0,
    max: 65535,
    hint: "use a port number from 0 to 65535",
  }),
  "bind-address": stringFlag("address to serve HTTPS on (upstream's default: 0.0.0.0)", "127.0.0.1"),
  "tls-cert-file": stringFlag("the serving certificate, PEM (absent: a self-signed one)"),
  "tls-private-key-file": stringFlag("the serving certificate's private key, PEM"),
  "cert-dir": stringFlag(
    "where a self-signed serving certificate is kept as apiserver.crt/.key (absent: in memory)",
  ),
  "client-ca-file": stringFlag(
    "CA certificates, PEM: a client certificate they signed is the user CN, groups O",
  ),
  "token-auth-file": stringFlag('static bearer tokens, CSV: token,user,uid,"group1,group2"'),
  "anonymous-auth": boolFlag("a request with no credential is system:anonymous (else 401)", true),
  // chapter 7: the kubelet — how pods/log and pods/exec reach a node's kubelet.
  "kubelet-client-certificate": stringFlag("Path to a client cert file for TLS."),
  "kubelet-client-key": stringFlag("Path to a client key file for TLS."),
  "kubelet-certificate-authority": stringFlag("Path to a cert file for the certificate authority."),
  "kubelet-preferred-address-types": listFlag(
    "List of the preferred NodeAddressTypes to use for kubelet connections.",
    DefaultPreferredAddressTypes,
    "replace",
  ),
};
// #endregion flags

// #region serving-rule
/** chapter 3: the flags that ask for HTTPS or configure it and its authentication. */
const secureFlags = [
  "secure-port",
  "bind-address",
  "tls-cert-file",
  "tls-private-key-file",
  "cert-dir",
  "client-ca-file",
  "token-auth-file",
  "anonymous-auth",
  "service-account-key-file",
  "service-account-issuer",
  "service-account-signing-key-file",
  "api-audiences",
] as const;

/**
 * What to serve: HTTPS on `--secure-port`, as upstream — except that a command line asking only
 * for `--insecure-port` (no secure or authentication flag) is chapter 2's server, plain HTTP
 * alone; plain HTTP is served only when `--insecure-port` is given.
 */
export function servingMode(given: ReadonlySet<string>): { secure: boolean; insecure: boolean } {
  const insecure = given.has("insecure-port");
  return { insecure, secure: !insecure || secureFlags.some((f) => given.has(f)) };
}
// #endregion serving-rule

/**
 * ApplyAuthorization: anonymous requests and the AlwaysAllow authorizer together would let anyone
 * at all do anything, so under AlwaysAllow (named, or the default when no mode is given)
 * `--anonymous-auth` is turned off, with upstream's warning — and a server with no other
 * authenticator then answers every request 401, as upstream's does.
 */
export function applyAuthorization(
  anonymousAuth: boolean,
  modes: readonly string[],
): { anonymousAuth: boolean; warning?: string } {
  if (!anonymousAuth || !modes.includes("AlwaysAllow")) return { anonymousAuth };
  return {
    anonymousAuth: false,
    warning:
      "AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer",
  };
}

// #region wiring
const kubeAPIServer = command({
  name: "kube-apiserver",
  about: "the course's miniature API server",
  syntax: "pflag",
  version: `Kubernetes ${versionInfo.gitVersion}`,
  flags,
  options(
    f,
    given,
  ):
    | (APIServerOptions & {
        verbosity: number;
        auditFiles?: { policyFile: string; logPath: string };
        kubeletClientFiles: { cert?: string; key?: string; ca?: string; preferredAddressTypes: string[] };
        warnings: string[];
        tracing?: TracingConfiguration; // chapter 8
      })
    | FlagError {
    const etcdServers = f["etcd-servers"];
    for (const url of etcdServers) {
      if (!/^https?:\/\/[^/]+/.test(url)) {
        return new FlagError(
          "kube-apiserver",
          `invalid --etcd-servers URL "${url}": write it as http://host:port (e.g. --etcd-servers=http://127.0.0.1:2379)`,
        );
      }
    }
    // chapter 3: RBAC — an unknown or repeated mode stops the server before it serves anything.
    const modeErrors = f["authorization-mode"].length
      ? validateAuthorizationModes(f["authorization-mode"])
      : [];
    if (modeErrors.length) return new FlagError("kube-apiserver", modeErrors.join("; "));
    // chapter 3: service-account tokens
    const serviceAccounts = serviceAccountConfigFromFlags({
      keyFiles: f["service-account-key-file"],
      issuers: f["service-account-issuer"],
      apiAudiences: f["api-audiences"],
      signingKeyFile: f["service-account-signing-key-file"],
      maxTokenExpirationMs: f["service-account-max-token-expiration"],
      extendTokenExpiration: f["service-account-extend-token-expiration"],
    });
    if (Array.isArray(serviceAccounts))
      return new FlagError("kube-apiserver", `[${serviceAccounts.join(", ")}]`);
    // chapter 3: admission
    const admission = admissionOptions(f, given);
    if (admission instanceof FlagError) return admission;
    // chapter 3: audit — on only with a policy and a log to write it to, as upstream.
    let audit: { policyFile: string; logPath: string } | undefined;
    const [policyFile, logPath] = [f["audit-policy-file"], f["audit-log-path"]];
    if (policyFile && logPath) audit = { policyFile, logPath };
    // chapter 8: tracing
    const tracing = readTracingConfigFlag("kube-apiserver", f["tracing-config-file"]);
    if (tracing instanceof FlagError) return tracing;
    // chapter 3: serving and authentication.
    const mode = servingMode(given);
    const modes = f["authorization-mode"].length ? f["authorization-mode"] : defaultAuthorizationModes;
    const anonymous = applyAuthorization(f["anonymous-auth"], modes);
    if (Boolean(f["tls-cert-file"]) !== Boolean(f["tls-private-key-file"])) {
      return new FlagError(
        "kube-apiserver",
        "--tls-cert-file and --tls-private-key-file must be given together (or neither: a self-signed certificate is made)",
      );
    }
    // chapter 7: the kubelet client — a certificate comes with its key; address types are known ones.
    if (Boolean(f["kubelet-client-certificate"]) !== Boolean(f["kubelet-client-key"])) {
      return new FlagError(
        "kube-apiserver",
        "--kubelet-client-certificate and --kubelet-client-key must be given together",
      );
    }
    const unknownType = f["kubelet-preferred-address-types"].find(
      (t) => !DefaultPreferredAddressTypes.includes(t),
    );
    if (unknownType !== undefined) {
      return new FlagError(
        "kube-apiserver",
        `invalid --kubelet-preferred-address-types value "${unknownType}": use ${DefaultPreferredAddressTypes.join(", ")}`,
      );
    }
    const secure: APIServerOptions = mode.secure
      ? {
          securePort: f["secure-port"],
          secureServing: {
            bindAddress: f["bind-address"],
            tlsCertFile: f["tls-cert-file"],
            tlsPrivateKeyFile: f["tls-private-key-file"],
            certDir: f["cert-dir"],
          },
          authentication: {
            clientCAFile: f["client-ca-file"],
            tokenAuthFile: f["token-auth-file"],
            anonymousAuth: anonymous.anonymousAuth,
            serviceAccounts: serviceAccounts?.authentication,
          },
        }
      : {};
    return {
      ...secure,
      authorizationModes: f["authorization-mode"].length ? f["authorization-mode"] : undefined,
      serviceAccountTokens: serviceAccounts?.tokens,
      auditFiles: audit,
      kubeletClientFiles: {
        cert: f["kubelet-client-certificate"],
        key: f["kubelet-client-key"],
        ca: f["kubelet-certificate-authority"],
        preferredAddressTypes: f["kubelet-preferred-address-types"],
      },
      admission,
      etcdServers: etcdServers.length > 0 ? etcdServers : undefined,
      dataDir: etcdServers.length > 0 ? undefined : f["data-dir"],
      ...(mode.insecure
        ? { insecurePort: f["insecure-port"], insecureBindAddress: f["insecure-bind-address"] }
        : {}),
      watchCache: f["watch-cache"],
      compactionIntervalMs: f["etcd-compaction-interval"],
      verbosity: f.v,
      tracing, // chapter 8
      // Only where anonymous requests could have reached the server: its secure port.
      warnings: mode.secure && anonymous.warning ? [anonymous.warning] : [],
    };
  },
  // Logs go to stderr, one plain line each, as klog's.
  async start({ verbosity, auditFiles, kubeletClientFiles, warnings, tracing, ...options }, io) {
    const log = verbosity >= 3 ? (line: string) => io.stderr(`${line}\n`) : undefined;
    for (const w of warnings) io.stderr(`${w}\n`);
    let server: Awaited<ReturnType<typeof startAPIServer>>;
    // chapter 8: tracing — service.name "apiserver", as upstream's resource names it.
    const tracerProvider = newProvider(tracing, "apiserver");
    try {
      const audit = auditFiles ? newAuditor(auditFiles.policyFile, auditFiles.logPath) : undefined;
      server = await startAPIServer({
        ...options,
        kubeletClient: kubeletClientConfig(kubeletClientFiles),
        tracerProvider,
        log,
        audit,
        // upstream's words: "Generated self-signed cert (…)" or "… in-memory".
        onServingCert: (origin) => io.stderr(`${origin}\n`),
      });
    } catch (e) {
      io.stderr(`kube-apiserver: failed to start: ${(e as Error).message}\n`);
      return undefined;
    }
    const storage = options.etcdServers
      ? `etcd ${options.etcdServers.join(",")}`
      : options.dataDir
        ? `embedded store in ${options.dataDir}`
        : "embedded store in memory";
    // One line per listener; the secure one last, as the line scripts wait for.
    const lines = [];
    if (server.insecureURL)
      lines.push(
        `Serving insecurely on ${server.insecureURL.replace(/^http:\/\//, "")} (storage: ${storage})`,
      );
    if (server.secureURL)
      lines.push(`Serving securely on ${server.secureURL.replace(/^https:\/\//, "")} (storage: ${storage})`);
    return {
      ready: lines.join("\n"),
      async stop(signal) {
        io.stderr(`Received ${signal}; shutting down\n`);
        await server.close();
        await tracerProvider.shutdown().catch(() => {}); // the last spans, before exiting
      },
    };
  },
});
// #endregion wiring

/** chapter 3: audit — the policy file read and checked, the log backend opened. */
function newAuditor(policyFile: string, logPath: string): Auditor {
  let text: string;
  try {
    text = readFileSync(policyFile, "utf8");
  } catch (e) {
    throw new Error(
      `loading audit policy file: failed to read file path "${policyFile}": ${(e as Error).message}`,
    );
  }
  let policy: Auditor["policy"];
  try {
    policy = loadPolicy(text, `file ${policyFile}`);
  } catch (e) {
    throw new Error(`loading audit policy file: ${(e as Error).message}`);
  }
  return { policy, backend: newLogBackend(logPath) };
}

/** chapter 7: the kubelet client's files read (their contents are what TLS takes). */
function kubeletClientConfig(files: {
  cert?: string;
  key?: string;
  ca?: string;
  preferredAddressTypes: string[];
}): KubeletClientConfig {
  const read = (flag: string, path: string | undefined) => {
    if (!path) return undefined;
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw new Error(`invalid --${flag} "${path}": ${(e as Error).message}`);
    }
  };
  return {
    cert: read("kubelet-client-certificate", files.cert),
    key: read("kubelet-client-key", files.key),
    ca: read("kubelet-certificate-authority", files.ca),
    preferredAddressTypes: files.preferredAddressTypes,
  };
}

// #region admission-flags
// chapter 3: admission
const admissionFlags = [
  "enable-admission-plugins",
  "disable-admission-plugins",
  "default-not-ready-toleration-seconds",
  "default-unreachable-toleration-seconds",
] as const;

/**
 * The rule for when the chain runs: whenever any admission flag is given (upstream's chain is
 * always on; ours is off without one, so chapters 1–2 start exactly as before). A plugin name
 * the server does not know, or one both enabled and disabled, is an error at start.
 */
function admissionOptions(
  f: FlagValues<typeof flags>,
  given: ReadonlySet<string>,
): AdmissionOptions | undefined | FlagError {
  if (!admissionFlags.some((name) => given.has(name))) return undefined;
  const options: AdmissionOptions = {
    enablePlugins: f["enable-admission-plugins"],
    disablePlugins: f["disable-admission-plugins"],
    defaultNotReadyTolerationSeconds: f["default-not-ready-toleration-seconds"],
    defaultUnreachableTolerationSeconds: f["default-unreachable-toleration-seconds"],
  };
  try {
    enabledPluginNames(options);
  } catch (e) {
    return new FlagError("kube-apiserver", (e as Error).message);
  }
  return options;
}
// #endregion admission-flags

/** Reads kube-apiserver's flags from argv (without the program name): a server to run, a text to print, or the error. */
export const parseAPIServerFlags = (argv: string[]) => parseCommand(kubeAPIServer, argv);

/** Runs the API server until SIGTERM or SIGINT; returns the exit code. */
export const main = (argv: string[], io?: CommandIO) => run(kubeAPIServer, argv, io);

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
