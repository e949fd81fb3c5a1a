/**
 * AlwaysDeny — the plugin that refuses every write, for tests of the chain. Deprecated upstream,
 * still registered.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/deny/admission.go (alwaysDeny)
 * @chapter 03-api-security
 */
import { newAdmissionForbidden } from "../errors.ts";
import type { MutationInterface, ValidationInterface } from "../interfaces.ts";

export const PluginName = "AlwaysDeny";

export function newAlwaysDeny(): MutationInterface & ValidationInterface {
  const refuse = async (a: Parameters<MutationInterface["admit"]>[0]) => {
    throw newAdmissionForbidden(a, "admission control is denying all modifications");
  };
  return { name: PluginName, handles: () => true, admit: refuse, validate: refuse };
}
