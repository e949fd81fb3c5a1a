/**
 * Loading `--config` — a KubeSchedulerConfiguration file (YAML or JSON) read, its kind checked,
 * strictly decoded and defaulted into the internal type.
 *
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/configfile.go (LoadConfigFromFile, loadConfig)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/json.go (Serializer.Decode: YAMLToJSON, missing kind / apiVersion)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/error.go (notRegisteredErr, missingKindErr, missingVersionErr)
 * @chapter 05-scheduler
 *
 * Solves: the operator learns from the first line of output what is wrong with the file and
 * how to fix it: the path that does not exist, the YAML line that does not parse, the
 * apiVersion this release no longer serves (v1beta3 went away in 1.29).
 *
 * Invariants:
 * - only `kubescheduler.config.k8s.io/v1`, kind `KubeSchedulerConfiguration` decodes; any other
 *   pair gets upstream's "no kind … is registered for version …" text.
 * - every error is a ConfigLoadError: `message` is upstream's text, `fix` says what to change,
 *   `line()` is both on one line (what a command prints).
 * - loading does not validate: validateKubeSchedulerConfiguration (validation.ts) does, as
 *   upstream's options.Validate runs after loading.
 */
import { readFileSync } from "node:fs";
import { parse, YAMLParseError } from "yaml";
import { DecodeError, decodeConfiguration } from "./decode.ts";
import { setDefaults } from "./defaults.ts";
import { Kind, type KubeSchedulerConfiguration, SchemeGroupVersion } from "./types.ts";

// What `--config` callers need, from one module.
export { defaultConfiguration } from "./defaults.ts";
export type { KubeSchedulerConfiguration } from "./types.ts";

/** The scheme name upstream's errors quote: where runtime.NewScheme() was called. */
export const schemeName = "pkg/scheduler/apis/config/scheme/scheme.go:30";

// #region load-error
export class ConfigLoadError extends Error {
  override readonly name = "ConfigLoadError";
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
  /** Upstream's message and the fix, on one line. */
  line(): string {
    return `${this.message.replace(/\s*\n\s*/g, " ")} (fix: ${this.fix})`;
  }
}
// #endregion load-error

// #region load-config
/** LoadConfigFromFile: read, decode, default. */
export function loadConfigFromFile(path: string): KubeSchedulerConfiguration {
  let data: string;
  try {
    data = readFileSync(path, "utf8");
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // Go's os.ReadFile error: `open <path>: no such file or directory`.
    const reason =
      err.code === "ENOENT"
        ? "no such file or directory"
        : err.code === "EACCES"
          ? "permission denied"
          : err.code === "EISDIR"
            ? "is a directory"
            : err.message;
    const verb = err.code === "EISDIR" ? "read" : "open";
    throw new ConfigLoadError(
      `${verb} ${path}: ${reason}`,
      "check the --config path: it must name a readable file",
    );
  }
  return loadConfig(data);
}

/** loadConfig: the file's text (YAML or JSON; JSON is YAML) to the defaulted internal type. */
export function loadConfig(data: string): KubeSchedulerConfiguration {
  let doc: unknown;
  try {
    doc = parse(data, { uniqueKeys: true });
  } catch (e) {
    // go-yaml says `yaml: line 3: <what>`; the yaml package's own wording follows the line.
    const line = e instanceof YAMLParseError && e.linePos ? e.linePos[0].line : undefined;
    const what = (e as Error).message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigLoadError(
      `error converting YAML to JSON: yaml: ${line !== undefined ? `line ${line}: ` : ""}${what}`,
      "the file is not valid YAML: fix the syntax at that line (indentation, a missing ':' or quote)",
    );
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigLoadError(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(doc) ? "array" : typeof doc} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      `the file must be a mapping with apiVersion: ${SchemeGroupVersion} and kind: ${Kind}`,
    );
  }
  const obj = doc as Record<string, unknown>;
  const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
  const kind = typeof obj.kind === "string" ? obj.kind : "";
  const want = `set apiVersion: ${SchemeGroupVersion} and kind: ${Kind}`;
  if (kind === "") throw new ConfigLoadError(`Object 'Kind' is missing in '${data}'`, want);
  // A bare "v1" has a version but no group; only a string with neither is "missing".
  if (apiVersion === "") throw new ConfigLoadError(`Object 'apiVersion' is missing in '${data}'`, want);
  if (apiVersion !== SchemeGroupVersion || kind !== Kind) {
    const removed =
      apiVersion.startsWith(`kubescheduler.config.k8s.io/v1beta`) || apiVersion.endsWith("/v1alpha1");
    throw new ConfigLoadError(
      `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme ${JSON.stringify(schemeName)}`,
      removed
        ? `${apiVersion} is no longer served (1.32 serves only v1): ${want}; check the field changes in the v1 migration notes`
        : want,
    );
  }
  let decoded: ReturnType<typeof decodeConfiguration>;
  try {
    decoded = decodeConfiguration(obj);
  } catch (e) {
    if (e instanceof DecodeError) {
      throw new ConfigLoadError(
        e.message,
        "give the field a value of the type named (durations as strings: 15s, 1m30s)",
      );
    }
    throw e;
  }
  if (decoded.strictError) {
    throw new ConfigLoadError(
      decoded.strictError,
      "remove or rename the unknown field (names are case-sensitive: see kubescheduler.config.k8s.io/v1)",
    );
  }
  return setDefaults(decoded.config, decoded.durationsMs);
}
// #endregion load-config
