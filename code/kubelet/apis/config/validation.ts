/**
 * Validation — the checks the kubelet runs on its merged configuration (file, then flags) before
 * it starts, with upstream's messages, all reported at once.
 * Mirrors kubernetes/kubernetes pkg/kubelet/apis/config/validation/validation.go.
 *
 * Solves: a configuration can decode and still be unusable — a port outside 1..65535, a Lease
 * that never expires, a taint with a bad key written in the file. The operator gets every
 * problem in one line, each naming both the file's field and the flag
 * (`port (--port) 0 must be between 1 and 65535, inclusive`).
 *
 * Invariants:
 * - the order of the errors is upstream's; the message is utilerrors' aggregate (one alone,
 *   several as `[a, b]`);
 * - only the fields of types.ts are checked; upstream's checks of fields we do not model
 *   (cgroups, image GC, managers, logging) are not here.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/config/validation/validation.go (ValidateKubeletConfiguration)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/errors/errors.go (NewAggregate: the message)
 * @chapter 07-kubelet
 */

import { isValidPortNum } from "../../../api/string-validation.ts";
import { validateTracingConfiguration } from "../../../tracing/config.ts";
import { checkTaintValidation, goTaintString } from "./taints.ts";
import type { KubeletConfiguration } from "./types.ts";

/** utilerrors.NewAggregate(errs).Error(): one message alone, several in brackets. */
export function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
}

// #region validate
/** ValidateKubeletConfiguration for the modelled fields: every problem, in upstream's order. */
export function validateKubeletConfiguration(kc: KubeletConfiguration): string[] {
  const errs: string[] = [];
  const add = (m: string) => errs.push(`invalid configuration: ${m}`);
  if (kc.nodeLeaseDurationSeconds <= 0) add("nodeLeaseDurationSeconds must be greater than 0");
  if (kc.healthzPort !== 0 && isValidPortNum(kc.healthzPort).length > 0)
    add(`healthzPort (--healthz-port) ${kc.healthzPort} must be between 1 and 65535, inclusive`);
  if (kc.nodeStatusMaxImages < -1)
    add(`nodeStatusMaxImages (--node-status-max-images) ${kc.nodeStatusMaxImages} must be -1 or greater`);
  if (kc.maxPods < 0) add(`maxPods (--max-pods) ${kc.maxPods} must not be a negative number`);
  if (isValidPortNum(kc.port).length > 0)
    add(`port (--port) ${kc.port} must be between 1 and 65535, inclusive`);
  if (kc.readOnlyPort !== 0 && isValidPortNum(kc.readOnlyPort).length > 0)
    add(`readOnlyPort (--read-only-port) ${kc.readOnlyPort} must be between 0 and 65535, inclusive`);
  for (const taint of kc.registerWithTaints) {
    // Upstream prints the taint, not the reason; the reason is what a learner needs, so it follows.
    const bad = checkTaintValidation(taint);
    if (bad) errs.push(`invalid taint: ${goTaintString(taint)} (${bad})`);
    if (taint.timeAdded !== undefined) add("taint.TimeAdded is not nil");
  }
  if (kc.containerRuntimeEndpoint === "") add("the containerRuntimeEndpoint was not specified or empty");
  // chapter 8: tracing.ValidateTracingConfiguration(kc.Tracing, …, field.NewPath("tracing")).
  if (kc.tracing) for (const e of validateTracingConfiguration(kc.tracing, "tracing")) add(e);
  return errs;
}
// #endregion validate
