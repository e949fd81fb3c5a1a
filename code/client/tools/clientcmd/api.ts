/**
 * The kubeconfig file's contents — clusters, users, contexts and the current context — read from
 * its YAML (kubernetes/client-go's `v1` wire form, lists of named entries) into the in-memory form that
 * loading and merging work on (maps by name, each entry remembering the file it came from).
 * Mirrors client-go tools/clientcmd/api/types.go (Config, Cluster, AuthInfo, Context) and
 * api/v1/types.go + conversion.go (the named lists, and their conversion to maps).
 *
 * Solves:
 * - one file can hold many clusters, many users and many contexts (a context = cluster + user +
 *   default namespace); `current-context` picks one — so switching clusters is one line;
 * - relative paths in a file mean "beside this file", so every entry keeps `locationOfOrigin`
 *   (the loader resolves paths against it);
 * - `*-data` fields are base64 of PEM text; decoded once here, so the rest of the client sees PEM.
 *
 * Invariants:
 * - names are unique within one file (a duplicate is an error, as upstream's conversion);
 * - an empty file is an empty Config, not an error.
 *
 * @upstream kubernetes/client-go tools/clientcmd/api/types.go (Config, Cluster, AuthInfo, Context, LocationOfOrigin)
 * @upstream kubernetes/client-go tools/clientcmd/api/v1/types.go (NamedCluster, NamedAuthInfo, NamedContext)
 * @upstream kubernetes/client-go tools/clientcmd/api/v1/conversion.go (duplicate name in list)
 * @chapter 04-informers
 */
import { parse } from "yaml";

// #region types
export interface Cluster {
  server: string;
  /** A CA file path (absolute after loading), or the PEM text of `certificate-authority-data`. */
  certificateAuthority?: string;
  certificateAuthorityData?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  /** The file this entry was read from. */
  locationOfOrigin?: string;
}

export interface AuthInfo {
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  locationOfOrigin?: string;
}

export interface Context {
  cluster: string;
  /** The user entry's name (`user:` in the file). */
  authInfo: string;
  namespace?: string;
  locationOfOrigin?: string;
}

export interface KubeConfig {
  clusters: Map<string, Cluster>;
  authInfos: Map<string, AuthInfo>;
  contexts: Map<string, Context>;
  currentContext: string;
}
// #endregion types

export const newConfig = (): KubeConfig => ({
  clusters: new Map(),
  authInfos: new Map(),
  contexts: new Map(),
  currentContext: "",
});

/** A kubeconfig that cannot be used: one line, naming the file and what to change. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KubeconfigError";
  }
}

// #region load
/** Load: the Config in `text` (YAML or JSON), entries marked as coming from `origin`. */
export function loadConfig(text: string, origin = ""): KubeConfig {
  const where = origin ? ` in ${origin}` : "";
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new KubeconfigError(`error loading config file "${origin}": ${(e as Error).message}`);
  }
  const config = newConfig();
  if (doc === null || doc === undefined) return config;
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new KubeconfigError(`error loading config file "${origin}": not a kubeconfig (expected a mapping)`);
  const d = doc as Record<string, unknown>;
  if (d.kind !== undefined && d.kind !== "Config")
    throw new KubeconfigError(
      `error loading config file "${origin}": kind is ${String(d.kind)}, expected Config`,
    );
  config.currentContext = str(d["current-context"]);
  for (const [name, c] of named(d.clusters, "cluster", where)) {
    config.clusters.set(name, {
      server: str(c.server),
      certificateAuthority: str(c["certificate-authority"]) || undefined,
      certificateAuthorityData: base64(c["certificate-authority-data"], `cluster "${name}"${where}`),
      insecureSkipTLSVerify: c["insecure-skip-tls-verify"] === true || undefined,
      tlsServerName: str(c["tls-server-name"]) || undefined,
      locationOfOrigin: origin || undefined,
    });
  }
  for (const [name, u] of named(d.users, "user", where)) {
    config.authInfos.set(name, {
      clientCertificate: str(u["client-certificate"]) || undefined,
      clientCertificateData: base64(u["client-certificate-data"], `user "${name}"${where}`),
      clientKey: str(u["client-key"]) || undefined,
      clientKeyData: base64(u["client-key-data"], `user "${name}"${where}`),
      token: str(u.token) || undefined,
      tokenFile: str(u.tokenFile) || undefined,
      username: str(u.username) || undefined,
      password: str(u.password) || undefined,
      locationOfOrigin: origin || undefined,
    });
  }
  for (const [name, c] of named(d.contexts, "context", where)) {
    config.contexts.set(name, {
      cluster: str(c.cluster),
      authInfo: str(c.user),
      namespace: str(c.namespace) || undefined,
      locationOfOrigin: origin || undefined,
    });
  }
  return config;
}
// #endregion load

/** The entries of a named list (`- name: x\n  cluster: {...}`), checked for duplicate names. */
function named(list: unknown, field: string, where: string): [string, Record<string, unknown>][] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new KubeconfigError(`${field}s${where} must be a list of {name, ${field}}`);
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const name = str(entry?.name);
    if (!name) throw new KubeconfigError(`${field}s[${i}]${where} has no name`);
    if (seen.has(name)) throw new KubeconfigError(`duplicate ${field} name "${name}"${where}`);
    seen.add(name);
    const body = entry?.[field] ?? {};
    return [name, typeof body === "object" ? body : {}];
  });
}

const str = (v: unknown): string =>
  typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);

function base64(v: unknown, what: string): string | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string" || !/^[A-Za-z0-9+/=\s]*$/.test(v))
    throw new KubeconfigError(`${what}: a *-data field must be base64 (of the PEM file)`);
  return Buffer.from(v, "base64").toString("utf8");
}
