/**
 * The file pod source — static pods from `--pod-manifest-path`, rescanned every 20 seconds.
 * Mirrors kubernetes/kubernetes pkg/kubelet/config/file.go.
 *
 * Solves: a node must be able to run pods before (or without) an API server — the control plane
 * itself is run that way by kubeadm. The kubelet reads pod manifests from a directory, runs them,
 * and shows them in the API as mirror pods.
 *
 * Invariants:
 * - each scan sends the whole set (SET) of valid pods found, files in name order, hidden files
 *   (starting with ".") skipped; a file that does not parse or is not a valid pod is skipped
 *   with an error and does not take the others down.
 * - a missing directory sends an empty SET (so the source still counts as seen) and an error.
 * - pods get their node-specific name and content UID from applyDefaults.
 *
 * What upstream does differently: upstream also watches the directory with inotify and rescans
 * at once on a change; here only the 20 s timer (fileCheckFrequency) rescans.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/config/file.go (sourceFile, NewSourceFile, extractFromPath, extractFromDir, extractFromFile)
 * @upstream kubernetes/kubernetes pkg/kubelet/config/defaults.go (DefaultFileCheckFrequency)
 * @chapter 07-kubelet
 */

import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import type { Pod } from "../../api/core.ts";
import { type Clock, realClock } from "../../client/util/clock.ts";
import { FileSource, type PodUpdate } from "../types/pod-update.ts";
import { applyDefaults } from "./common.ts";

/** fileCheckFrequency: the kubelet's default for --file-check-frequency. */
export const fileCheckFrequencyMs = 20_000;

/** One manifest: a single Pod in YAML or JSON (JSON is YAML). */
export function extractFromFile(path: string, text: string, nodeName: string): Pod {
  const obj = parse(text) as Pod | null;
  if (!obj || typeof obj !== "object") throw new Error(`${path}: not a pod manifest`);
  if (obj.kind !== "Pod")
    throw new Error(`${path}: invalid pod: kind is ${JSON.stringify(obj.kind)}, want "Pod"`);
  if (!obj.metadata?.name)
    throw new Error(`${path}: invalid pod: metadata.name: Required value: name or generateName is required`);
  if (!obj.spec?.containers?.length) throw new Error(`${path}: invalid pod: spec.containers: Required value`);
  return applyDefaults(obj, path, nodeName);
}

// #region extract-from-path
/** A scan: the pods of every manifest in the directory (or the one file `path` names). */
export async function extractFromPath(
  path: string,
  nodeName: string,
  onError: (err: Error) => void,
): Promise<Pod[]> {
  const st = await stat(path).catch(() => undefined);
  if (!st) {
    onError(new Error(`path does not exist, ignoring: ${path}`));
    return [];
  }
  const files = st.isDirectory()
    ? (await readdir(path))
        .filter((f) => !f.startsWith("."))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const pods: Pod[] = [];
  for (const file of files) {
    try {
      const fst = await stat(file);
      if (!fst.isFile()) continue;
      pods.push(extractFromFile(file, await readFile(file, "utf8"), nodeName));
    } catch (err) {
      onError(err as Error);
    }
  }
  return pods;
}
// #endregion extract-from-path

/** Scans now and every `periodMs` until `signal` aborts; resolves when stopped. */
export async function newSourceFile(
  path: string,
  nodeName: string,
  updates: (u: PodUpdate) => void,
  signal: AbortSignal,
  opts: { clock?: Clock; periodMs?: number; onError?: (err: Error) => void } = {},
): Promise<void> {
  const clock = opts.clock ?? realClock;
  const onError = opts.onError ?? (() => {});
  while (!signal.aborted) {
    const pods = await extractFromPath(path, nodeName, onError);
    if (signal.aborted) break;
    updates({ pods, op: "SET", source: FileSource });
    await new Promise<void>((resolve) => {
      const t = clock.afterFunc(opts.periodMs ?? fileCheckFrequencyMs, resolve);
      signal.addEventListener(
        "abort",
        () => {
          t.stop();
          resolve();
        },
        { once: true },
      );
    });
  }
}
