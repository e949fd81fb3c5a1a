/**
 * ClientConfig — from a loaded kubeconfig and the command line's overrides (`--context`,
 * `--namespace`, `--server`, `--request-timeout`) to the rest.Config a client is built from, and
 * the namespace to work in.
 * Mirrors kubernetes/client-go tools/clientcmd/client_config.go (DirectClientConfig, ClientConfig, Namespace,
 * getContext, getAuthInfo, getCluster, BuildConfigFromFlags), overrides.go (ConfigOverrides) and
 * validation.go (ConfirmUsable).
 *
 * Solves:
 * - every component takes `--kubeconfig` (and kubectl `--context`); they must pick the same
 *   context, cluster and user from the same files kubectl would, or a component would talk to
 *   another cluster than the one the learner checked with kubectl;
 * - a wrong name is the most common kubeconfig mistake, so each error names the file(s), the
 *   missing name, and the names that do exist: `context "x" not found in /p/kc: available: a, b`.
 *
 * Invariants:
 * - the context is `overrides.currentContext` if given, else the file's current-context;
 *   the cluster and user are the context's, unless overridden;
 * - the namespace is the override, else the context's, else `default`;
 * - credentials (token, client certificate) are copied only for an HTTPS server, as upstream
 *   (only "if we are secure");
 * - a `token` wins over `tokenFile`; a tokenFile is read here, and an unreadable one is an error;
 * - `*-data` wins over the file of the same thing; setting both is an error, as ConfirmUsable says.
 *
 * @upstream kubernetes/client-go tools/clientcmd/client_config.go (DirectClientConfig, ClientConfig, Namespace, getContext, getAuthInfo, getCluster, BuildConfigFromFlags)
 * @upstream kubernetes/client-go tools/clientcmd/overrides.go (ConfigOverrides, ContextOverrideFlags)
 * @upstream kubernetes/client-go tools/clientcmd/validation.go (ConfirmUsable, validateClusterInfo, validateAuthInfo)
 * @chapter 04-informers
 */
import { readFileSync } from "node:fs";
import type { Config } from "../../rest/config.ts";
import type { AuthInfo, Cluster, Context, KubeConfig } from "./api.ts";
import { KubeconfigError } from "./api.ts";
import {
  type ClientConfigLoadingRules,
  filesOf,
  load,
  newDefaultClientConfigLoadingRules,
} from "./loader.ts";

// #region overrides
/** ConfigOverrides: what the command line says instead of the file. */
export interface ConfigOverrides {
  /** `--context` */
  currentContext?: string;
  /** `--cluster`, `--user`, `--namespace` */
  context?: { cluster?: string; authInfo?: string; namespace?: string };
  /** `--server`, `--certificate-authority`, `--insecure-skip-tls-verify` */
  clusterInfo?: Partial<Pick<Cluster, "server" | "certificateAuthority" | "insecureSkipTLSVerify">>;
  /** `--token` */
  authInfo?: Partial<Pick<AuthInfo, "token">>;
  /** `--request-timeout`, in milliseconds (0: none). */
  timeout?: number;
}
// #endregion overrides

// #region client-config
export class DirectClientConfig {
  constructor(
    readonly config: KubeConfig,
    readonly overrides: ConfigOverrides = {},
    /** The files the config came from, for error messages. */
    readonly files: string[] = [],
  ) {}

  /** The context in use, its name, and where a missing name would have been looked for. */
  contextName(): string {
    return this.overrides.currentContext || this.config.currentContext;
  }

  getContext(): Context {
    const name = this.contextName();
    const available = [...this.config.contexts.keys()];
    if (!name) {
      // No context at all is fine if the command line says where the server is.
      if (this.overrides.clusterInfo?.server) return { cluster: "", authInfo: "" };
      throw new KubeconfigError(
        available.length === 0
          ? `no configuration has been provided: ${this.where()} has no contexts (point --kubeconfig or KUBECONFIG at a kubeconfig file)`
          : `no current context in ${this.where()}: set current-context or pass --context (available: ${available.join(", ")})`,
      );
    }
    const ctx = this.config.contexts.get(name);
    if (!ctx) throw notFound("context", name, this.where(), available);
    return { ...ctx, ...withoutEmpty(this.overrides.context ?? {}) };
  }

  getCluster(): Cluster {
    const ctx = this.getContext();
    const overrides = withoutEmpty(this.overrides.clusterInfo ?? {});
    if (!ctx.cluster) return { server: "", ...overrides };
    const cluster = this.config.clusters.get(ctx.cluster);
    if (!cluster && !overrides.server)
      throw notFound(
        "cluster",
        ctx.cluster,
        this.where(),
        [...this.config.clusters.keys()],
        this.contextName(),
      );
    const merged: Cluster = { server: "", ...cluster, ...overrides };
    // A CA given on the command line replaces the file's inline CA too.
    if (overrides.certificateAuthority) merged.certificateAuthorityData = undefined;
    return merged;
  }

  getAuthInfo(): AuthInfo {
    const ctx = this.getContext();
    const overrides = withoutEmpty(this.overrides.authInfo ?? {});
    if (!ctx.authInfo) return { ...overrides };
    const user = this.config.authInfos.get(ctx.authInfo);
    if (!user)
      throw notFound(
        "user",
        ctx.authInfo,
        this.where(),
        [...this.config.authInfos.keys()],
        this.contextName(),
      );
    return { ...user, ...overrides };
  }

  /** Namespace: the override, the context's, or `default`. */
  namespace(): string {
    if (this.overrides.context?.namespace) return this.overrides.context.namespace;
    return this.getContext().namespace || "default";
  }

  /** ClientConfig: the rest.Config for the chosen context. */
  clientConfig(): Config {
    const cluster = this.getCluster();
    const user = this.getAuthInfo();
    const name = this.getContext().cluster || "(command line)";
    if (!cluster.server)
      throw new KubeconfigError(
        `cluster "${name}" in ${this.where()} has no server (set clusters[].cluster.server)`,
      );
    const config: Config = { host: cluster.server };
    if (this.overrides.timeout) config.timeout = this.overrides.timeout;
    if (!cluster.server.startsWith("https://")) return config; // credentials only over TLS
    if (cluster.certificateAuthority && cluster.certificateAuthorityData)
      throw new KubeconfigError(
        `certificate-authority-data and certificate-authority are both specified for cluster "${name}" in ${this.where()}: keep one`,
      );
    const who = this.getContext().authInfo || "(command line)";
    if (user.clientCertificate && user.clientCertificateData)
      throw new KubeconfigError(
        `client-certificate-data and client-certificate are both specified for user "${who}": keep one`,
      );
    if ((user.clientCertificate || user.clientCertificateData) && !(user.clientKey || user.clientKeyData))
      throw new KubeconfigError(
        `user "${who}" has a client certificate but no client-key or client-key-data`,
      );
    config.tlsClientConfig = {
      insecure: cluster.insecureSkipTLSVerify,
      serverName: cluster.tlsServerName,
      caData: cluster.certificateAuthorityData,
      caFile: cluster.certificateAuthority,
      certData: user.clientCertificateData,
      certFile: user.clientCertificate,
      keyData: user.clientKeyData,
      keyFile: user.clientKey,
    };
    if (user.token) {
      config.bearerToken = user.token;
    } else if (user.tokenFile) {
      try {
        config.bearerToken = readFileSync(user.tokenFile, "utf8").trim();
      } catch (e) {
        throw new KubeconfigError(
          `cannot read tokenFile ${user.tokenFile} of user "${who}": ${(e as Error).message}`,
        );
      }
      config.bearerTokenFile = user.tokenFile;
    }
    return config;
  }

  private where(): string {
    return this.files.length > 0 ? this.files.join(", ") : "the kubeconfig";
  }
}
// #endregion client-config

function notFound(
  what: string,
  name: string,
  where: string,
  available: string[],
  context?: string,
): KubeconfigError {
  const of = context ? ` (of context "${context}")` : "";
  const list = available.length > 0 ? available.join(", ") : "none";
  return new KubeconfigError(`${what} "${name}"${of} not found in ${where}: available: ${list}`);
}

function withoutEmpty<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== "")) as Partial<T>;
}

// #region deferred-loading
/**
 * NewNonInteractiveDeferredLoadingClientConfig, eagerly: load the rules' files, apply the
 * overrides. What kubectl and every component do with `--kubeconfig`, `--context`, `-n`.
 */
export function newNonInteractiveDeferredLoadingClientConfig(
  rules: ClientConfigLoadingRules = newDefaultClientConfigLoadingRules(),
  overrides: ConfigOverrides = {},
): DirectClientConfig {
  const files = filesOf(rules).filter(Boolean);
  return new DirectClientConfig(load(rules), overrides, files);
}

/**
 * BuildConfigFromFlags(masterUrl, kubeconfigPath): a component's `--master` and `--kubeconfig`.
 * With neither, KUBECONFIG (or ~/.kube/config) is read, as kubectl does.
 */
export function buildConfigFromFlags(masterUrl: string, kubeconfigPath: string, env = process.env): Config {
  const rules = kubeconfigPath
    ? { explicitPath: kubeconfigPath, precedence: [] }
    : newDefaultClientConfigLoadingRules(env);
  return newNonInteractiveDeferredLoadingClientConfig(
    rules,
    masterUrl ? { clusterInfo: { server: masterUrl } } : {},
  ).clientConfig();
}
// #endregion deferred-loading
