/**
 * ClientConfigLoadingRules — which kubeconfig files are read, and how several become one:
 * `--kubeconfig` alone if given; else every file of `KUBECONFIG` (split on the path-list
 * separator, `:` or `;` on Windows); else `~/.kube/config`.
 * Mirrors client-go tools/clientcmd/loader.go (ClientConfigLoadingRules, NewDefaultClientConfigLoadingRules,
 * Load, LoadFromFile, ResolveLocalPaths) and merge.go.
 *
 * Solves:
 * - a learner (or a CI job) keeps one file per cluster and lists them in KUBECONFIG; kubectl sees
 *   one merged view, and so must our components, or "works with kubectl" would not mean the same
 *   cluster and user;
 * - `client-certificate: admin.crt` in /etc/pki/admin.kubeconfig means /etc/pki/admin.crt,
 *   wherever the program was started.
 *
 * Invariants (upstream's merge rules):
 * - the first file to define a cluster, user or context name wins, whole: a later file's entry
 *   of the same name is ignored entirely, even its fields the first one left empty;
 * - `current-context` comes from the first file that sets it;
 * - files of KUBECONFIG that do not exist are skipped (a duplicate path is read once); an
 *   explicit path that does not exist is an error; a file that cannot be parsed is an error;
 * - after loading, every relative path (certificate-authority, client-certificate, client-key,
 *   tokenFile) is absolute, resolved against the directory of the file it came from.
 *
 * @upstream kubernetes/client-go tools/clientcmd/loader.go (ClientConfigLoadingRules, NewDefaultClientConfigLoadingRules, Load, LoadFromFile, ResolveLocalPaths, RecommendedHomeFile)
 * @upstream kubernetes/client-go tools/clientcmd/merge.go (merge)
 * @chapter 04-informers
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { type KubeConfig, KubeconfigError, loadConfig, newConfig } from "./api.ts";

export const RecommendedConfigPathEnvVar = "KUBECONFIG";

export interface ClientConfigLoadingRules {
  /** `--kubeconfig`: this file only, and it must exist. */
  explicitPath?: string;
  /** The files to merge, first wins (from KUBECONFIG, or ~/.kube/config). */
  precedence: string[];
}

/** NewDefaultClientConfigLoadingRules: KUBECONFIG's files, or ~/.kube/config. `env` defaults to process.env. */
export function newDefaultClientConfigLoadingRules(
  env: NodeJS.ProcessEnv = process.env,
  home: string = env.HOME || homedir(),
): ClientConfigLoadingRules {
  const list = env[RecommendedConfigPathEnvVar];
  if (list) return { precedence: [...new Set(list.split(delimiter).filter(Boolean))] };
  return { precedence: [join(home, ".kube", "config")] };
}

/** The files the rules read, in order (for error messages: "not found in a, b"). */
export function filesOf(rules: ClientConfigLoadingRules): string[] {
  return rules.explicitPath ? [rules.explicitPath] : rules.precedence;
}

// #region load
/** Load: the merged, path-resolved Config of the rules' files. */
export function load(rules: ClientConfigLoadingRules): KubeConfig {
  if (rules.explicitPath && !existsSync(rules.explicitPath))
    throw new KubeconfigError(
      `kubeconfig ${rules.explicitPath} does not exist (check the --kubeconfig path)`,
    );
  const configs: KubeConfig[] = [];
  for (const file of filesOf(rules)) {
    if (!file) continue;
    const config = loadFromFile(file);
    if (config) configs.push(config);
  }
  const merged = newConfig();
  for (const c of configs) {
    // First file to set a name wins, and keeps its whole entry.
    for (const [name, v] of c.clusters) if (!merged.clusters.has(name)) merged.clusters.set(name, v);
    for (const [name, v] of c.authInfos) if (!merged.authInfos.has(name)) merged.authInfos.set(name, v);
    for (const [name, v] of c.contexts) if (!merged.contexts.has(name)) merged.contexts.set(name, v);
    // First file to set current-context wins.
    if (!merged.currentContext) merged.currentContext = c.currentContext;
  }
  resolveLocalPaths(merged);
  return merged;
}
// #endregion load

/** LoadFromFile: the file's Config, undefined if it does not exist. */
export function loadFromFile(file: string): KubeConfig | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new KubeconfigError(`error loading config file "${file}": ${(e as Error).message}`);
  }
  return loadConfig(text, file);
}

// #region resolve-paths
/** ResolveLocalPaths: file references made absolute against their own file's directory. */
export function resolveLocalPaths(config: KubeConfig): void {
  const abs = (path: string | undefined, origin: string | undefined) =>
    path && origin && !isAbsolute(path) ? join(resolve(dirname(origin)), path) : path;
  for (const c of config.clusters.values())
    c.certificateAuthority = abs(c.certificateAuthority, c.locationOfOrigin);
  for (const u of config.authInfos.values()) {
    u.clientCertificate = abs(u.clientCertificate, u.locationOfOrigin);
    u.clientKey = abs(u.clientKey, u.locationOfOrigin);
    u.tokenFile = abs(u.tokenFile, u.locationOfOrigin);
  }
}
// #endregion resolve-paths
