/**
 * AlwaysAdmit — the plugin that lets everything through. Deprecated upstream ("no real
 * meaning"), kept because `--enable-admission-plugins=AlwaysAdmit` is still accepted.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/admit/admission.go (alwaysAdmit)
 * @chapter 03-api-security
 */
import type { MutationInterface, ValidationInterface } from "../interfaces.ts";

export const PluginName = "AlwaysAdmit";

export function newAlwaysAdmit(): MutationInterface & ValidationInterface {
  return { name: PluginName, handles: () => true, admit: async () => {}, validate: async () => {} };
}
