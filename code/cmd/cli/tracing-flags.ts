/**
 * `--tracing-config-file` — the flag every traced control-plane command takes: the API server's
 * (upstream's flag and file), and this course's kube-scheduler and kube-controller-manager, which
 * take the same file although upstream 1.32 traces neither (a COURSE FLAG, said in their help).
 *
 * Solves: one reading of the file for three commands, its error a one-line flag error at start
 * (as upstream's kube-apiserver fails to start on a bad tracing file), and one way to make the
 * component's provider and flush it when the command stops.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/tracing.go (TracingOptions: --tracing-config-file, ApplyTo)
 * @chapter 08-cluster
 */
import {
  readTracingConfiguration,
  TracingConfigError,
  type TracingConfiguration,
} from "../../tracing/config.ts";
import { FlagError, stringFlag } from "./flag.ts";

/** The flag: upstream's help for the API server; for the others, the same file as a course flag. */
export function tracingConfigFileFlag(course: boolean) {
  return stringFlag(
    course
      ? "COURSE FLAG (upstream 1.32 does not trace this component): file with tracing configuration, the API server's format (apiserver.config.k8s.io/v1beta1 TracingConfiguration)"
      : "File with apiserver tracing configuration.",
  );
}

/** The file read and checked: the configuration, none (no flag: tracing off), or the flag error. */
export function readTracingConfigFlag(
  command: string,
  file: string | undefined,
): TracingConfiguration | undefined | FlagError {
  if (!file) return undefined;
  try {
    return readTracingConfiguration(file);
  } catch (e) {
    if (e instanceof TracingConfigError) return new FlagError(command, `--tracing-config-file: ${e.message}`);
    throw e;
  }
}
