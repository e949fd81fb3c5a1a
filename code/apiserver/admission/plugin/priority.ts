/**
 * Priority — a pod's `priorityClassName` becomes its `spec.priority` and `preemptionPolicy`, from
 * the PriorityClass of that name; a pod naming none gets the globalDefault class's, or 0.
 *
 * Solves:
 * - the scheduler orders and preempts by an integer; users name classes ("high", the built-in
 *   system-node-critical), so the integer is filled in once, when the pod is created, and a
 *   pod cannot claim a priority its class does not give it;
 * - at most one class may be the cluster's default: a second globalDefault is refused.
 *
 * Invariants:
 * - on create, a priority (or preemptionPolicy) the client sent must equal the class's, or the
 *   pod is refused; on update, a priority the client left out is kept from the stored pod
 *   (validation forbids changing it);
 * - the system classes exist from the start (`ensureSystemPriorityClasses`, as upstream's
 *   scheduling REST storage post-start hook creates them), so `system-node-critical` resolves.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/priority/admission.go (Plugin.Admit, admitPod, validatePriorityClass, getDefaultPriorityClass, getDefaultPriority)
 * @upstream kubernetes/kubernetes pkg/registry/scheduling/rest/storage_scheduling.go (AddSystemPriorityClasses)
 * @chapter 03-api-security
 */
import type { Pod, PreemptionPolicy } from "../../../api/core.ts";
import { setDefaultsPriorityClass } from "../../../api/defaults.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { type PriorityClass, SYSTEM_PRIORITY_CLASSES } from "../../../api/scheduling.ts";
import { isStatusError, newInternalError } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import type { PluginContext } from "../context.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, MutationInterface, ValidationInterface } from "../interfaces.ts";

export const PluginName = "Priority";

/** scheduling.DefaultPriorityWhenNoDefaultClassExists. */
export const DefaultPriorityWhenNoDefaultClassExists = 0;

const is = (a: Attributes, group: string, resource: string) =>
  a.resource.group === group && a.resource.resource === resource && !a.subresource;

// #region priority
export function newPriority(ctx: PluginContext): MutationInterface & ValidationInterface {
  const classes = (): Store => {
    const store = ctx.store("scheduling.k8s.io", "priorityclasses");
    if (!store) throw newInternalError("Priority: no priorityclasses store");
    return store;
  };

  /** The globalDefault class; with several (a race), the lowest value, as upstream. */
  async function defaultClass(): Promise<PriorityClass | undefined> {
    const { items } = await classes().list("", {});
    let found: PriorityClass | undefined;
    for (const pc of items as PriorityClass[]) {
      if (pc.globalDefault && (!found || pc.value < found.value)) found = pc;
    }
    return found;
  }

  async function admitPod(a: Attributes): Promise<void> {
    const pod = a.object as Pod;
    if (a.operation === "UPDATE") {
      const old = a.oldObject as Pod | undefined;
      if (pod.spec.priority === undefined && old?.spec.priority !== undefined)
        pod.spec.priority = old.spec.priority;
      if (pod.spec.preemptionPolicy === undefined && old?.spec.preemptionPolicy !== undefined) {
        pod.spec.preemptionPolicy = old.spec.preemptionPolicy;
      }
      return;
    }
    let priority: number;
    let policy: PreemptionPolicy | undefined;
    if (!pod.spec.priorityClassName) {
      const dpc = await defaultClass();
      if (dpc) {
        pod.spec.priorityClassName = dpc.metadata.name;
        priority = dpc.value;
        policy = dpc.preemptionPolicy;
      } else {
        priority = DefaultPriorityWhenNoDefaultClassExists;
        policy = "PreemptLowerPriority";
      }
    } else {
      let pc: PriorityClass;
      try {
        pc = (await classes().get("", pod.spec.priorityClassName)) as PriorityClass;
      } catch (e) {
        if (isStatusError(e) && e.code === 404) {
          throw newAdmissionForbidden(
            a,
            `no PriorityClass with name ${pod.spec.priorityClassName} was found`,
          );
        }
        throw e;
      }
      priority = pc.value;
      policy = pc.preemptionPolicy;
    }
    if (pod.spec.priority !== undefined && pod.spec.priority !== null && pod.spec.priority !== priority) {
      throw newAdmissionForbidden(
        a,
        `the integer value of priority (${pod.spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    pod.spec.priority = priority;
    if (policy) {
      if (pod.spec.preemptionPolicy && pod.spec.preemptionPolicy !== policy) {
        throw newAdmissionForbidden(
          a,
          `the string value of PreemptionPolicy (${pod.spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      pod.spec.preemptionPolicy = policy;
    }
  }

  return {
    name: PluginName,
    handles: (op) => op === "CREATE" || op === "UPDATE" || op === "DELETE",
    async admit(a) {
      if (is(a, "", "pods") && a.object && (a.operation === "CREATE" || a.operation === "UPDATE")) {
        await admitPod(a);
      }
    },
    async validate(a) {
      if (!is(a, "scheduling.k8s.io", "priorityclasses") || !a.object) return;
      if (a.operation !== "CREATE" && a.operation !== "UPDATE") return;
      const pc = a.object as PriorityClass;
      if (!pc.globalDefault) return;
      const dpc = await defaultClass();
      if (dpc && (a.operation === "CREATE" || dpc.metadata.name !== pc.metadata.name)) {
        throw newAdmissionForbidden(
          a,
          `PriorityClass ${dpc.metadata.name} is already marked as default. Only one default can exist`,
        );
      }
    },
  };
}
// #endregion priority

// #region system-classes
/** AddSystemPriorityClasses: system-node-critical and system-cluster-critical, if missing. */
export async function ensureSystemPriorityClasses(store: Store): Promise<void> {
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    const pc: KubeObject = {
      apiVersion: "scheduling.k8s.io/v1",
      kind: "PriorityClass",
      metadata: { name: c.name },
      value: c.value,
      description: c.description,
    };
    setDefaultsPriorityClass(pc);
    await store.create("", pc).catch((e) => {
      if (!(isStatusError(e) && e.code === 409)) throw e;
    });
  }
}
// #endregion system-classes
