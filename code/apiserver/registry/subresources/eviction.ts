/**
 * pods/eviction — "delete this pod, unless that breaks its PodDisruptionBudget": what `kubectl
 * drain`, the cluster autoscaler and every other voluntary disruption posts, as
 * `POST /api/v1/namespaces/default/pods/web/eviction` with a policy/v1 Eviction. Upstream:
 * `EvictionREST` in kubernetes pkg/registry/core/pod/storage/eviction.go.
 *
 * Solves:
 * - two drains at once must not both take "the last allowed" pod: the budget is checked and
 *   decremented in one optimistic write of the PDB's status (a stale copy is a Conflict, retried
 *   on a fresh read), and the pod's name goes into `status.disruptedPods` so the disruption
 *   controller counts it as gone before it is;
 * - a refusal is a 429 TooManyRequests, which a client retries (drain: every 5 s), not an error:
 *   the budget frees itself once a replacement is Ready;
 * - a pod that already is no disruption (Pending, Succeeded, Failed, being deleted) is deleted
 *   without asking any budget.
 *
 * Invariants:
 * - `disruptionsAllowed` is never taken below zero by an eviction; an eviction that decremented it
 *   is followed by the pod's (graceful) delete;
 * - a budget the controller has not yet processed (`observedGeneration < generation`) refuses;
 * - a pod matched by more than one budget is never evicted (500, upstream's message);
 * - an evicted pod is marked first: condition DisruptionTarget=True, reason EvictionByEvictionAPI
 *   (PodDisruptionConditions, GA in 1.31), written on the latest copy, then deleted — a
 *   resourceVersion precondition is checked on that copy and then moved to the marked one;
 * - a not-Ready pod is evicted without decrementing when the budget is already met (or its
 *   unhealthyPodEvictionPolicy is AlwaysAllow), but only if the pod has not changed since it was
 *   read (a resourceVersion precondition; a Conflict there is a 429, so the client retries).
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go (EvictionREST.Create, addConditionAndDeletePod, checkAndDecrement, canIgnorePDB, getPodDisruptionBudgets, createTooManyRequestsError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/apps/poddisruptionbudget/helpers.go (UpdateDisruptionAllowedCondition)
 * @chapter 08-cluster
 */
import type { Pod } from "../../../api/core.ts";
import { labelSelectorAsSelector, selectorMatches } from "../../../api/labels.ts";
import type { KubeObject, Status } from "../../../api/meta.ts";
import {
  DisruptionAllowedCondition,
  InsufficientPodsReason,
  type PodDisruptionBudget,
  SufficientPodsReason,
} from "../../../api/policy.ts";
import {
  isStatusError,
  newBadRequest,
  newConflict,
  newForbidden,
  newTimeoutError,
  newTooManyRequests,
} from "../../errors.ts";
import type { DeleteOptions } from "../delete.ts";
import { nowRFC3339, type Store } from "../store.ts";

export interface Eviction extends KubeObject {
  deleteOptions?: DeleteOptions;
}

/** MaxDisruptedPodSize: more approved-but-unconfirmed evictions than this, and the budget refuses. */
export const maxDisruptedPodSize = 2000;

/** EvictionsRetry: 20 tries, 500 ms apart (jitter 0.1), on a Conflict. */
export const evictionsRetry = { steps: 20, durationMs: 500 };

const success = (): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  code: 201,
});
const isConflict = (e: unknown) => isStatusError(e) && e.code === 409;
const pdbResource = { group: "policy", resource: "poddisruptionbudget" };
const tooManyMessage = "Cannot evict pod as it would violate the pod's disruption budget.";

/** retry.OnError: run `f` until it succeeds, `retriable` says no, or the steps run out (ErrWaitTimeout). */
async function onError<T>(retriable: (e: unknown) => boolean, f: () => Promise<T>): Promise<T> {
  for (let step = 1; ; step++) {
    try {
      return await f();
    } catch (e) {
      if (!retriable(e)) throw e;
      if (step >= evictionsRetry.steps) throw new WaitTimeout(e);
      const jitter = 1 + Math.random() * 0.1;
      await new Promise((r) => setTimeout(r, evictionsRetry.durationMs * jitter));
    }
  }
}

class WaitTimeout extends Error {
  constructor(readonly last: unknown) {
    super("timed out waiting for the condition");
  }
}

// #region evict
/**
 * EvictionREST.Create: delete at once when no budget applies, else verify-and-decrement the one
 * budget matching the pod, then delete the pod (gracefully: the kubelet stops it).
 */
export async function createEviction(
  pods: Store,
  pdbs: Store,
  namespace: string,
  podName: string,
  eviction: Eviction,
  dryRun: string[] = [],
): Promise<Status> {
  if (eviction.metadata?.name !== podName) {
    throw newBadRequest("name in URL does not match name in Eviction object");
  }
  const original = propagateDryRun(eviction, dryRun);
  const isDryRun = original.dryRun?.includes("All") ?? false;
  const rvUnset = original.preconditions?.resourceVersion === undefined;

  // A pod that is no disruption (terminal, Pending, being deleted) goes without a budget check.
  let pod: Pod | undefined;
  let deleted = false;
  await onError(
    (e) => rvUnset && isConflict(e), // the client's own precondition is not retried
    async () => {
      pod = (await pods.get(namespace, podName)) as Pod;
      if (!canIgnorePDB(pod)) return;
      let options = original;
      if (shouldEnforceResourceVersion(pod) && rvUnset) {
        options = withResourceVersion(original, pod.metadata.resourceVersion);
      }
      await addConditionAndDeletePod(pods, namespace, podName, options);
      deleted = true;
    },
  ).catch(rethrowTimeout(""));
  if (deleted || !pod) return success();
  const target = pod;

  const matching = await getPodDisruptionBudgets(pdbs, target);
  if (matching.length > 1) {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
      code: 500,
    };
  }
  let updateDeletionOptions = false;
  if (matching.length === 1) {
    let pdb = matching[0];
    const pdbName = pdb.metadata.name ?? "";
    const status = pdb.status;
    const alwaysAllow = pdb.spec?.unhealthyPodEvictionPolicy === "AlwaysAllow";
    const budgetMet =
      status !== undefined && status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0;
    if (!isPodReady(target) && (alwaysAllow || budgetMet)) {
      // Not counted as healthy: taking it costs the budget nothing — if it stays not Ready.
      updateDeletionOptions = true;
    } else {
      let refresh = false;
      await onError(isConflict, async () => {
        if (refresh) pdb = (await pdbs.get(namespace, pdbName)) as PodDisruptionBudget;
        refresh = true;
        await checkAndDecrement(pdbs, podName, pdb, isDryRun);
      }).catch(rethrowTimeout(`couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`));
    }
    // Deleting on the copy read above: a pod that became Ready since then is a Conflict → 429.
    const options = updateDeletionOptions
      ? withResourceVersion(original, target.metadata.resourceVersion)
      : original;
    try {
      await addConditionAndDeletePod(pods, namespace, podName, options);
    } catch (e) {
      if (isConflict(e) && updateDeletionOptions && rvUnset) throw createTooManyRequestsError(pdbName);
      throw e;
    }
    return success();
  }
  await addConditionAndDeletePod(pods, namespace, podName, original);
  return success();
}
// #endregion evict

/**
 * addConditionAndDeletePod: mark the pod DisruptionTarget (so whoever watches it — its Job, its
 * kubelet's status — knows it was evicted, not failed), then delete it. Dry runs only delete.
 */
async function addConditionAndDeletePod(
  pods: Store,
  namespace: string,
  name: string,
  options: DeleteOptions,
): Promise<void> {
  let opts = options;
  if (!(options.dryRun?.includes("All") ?? false)) {
    const { obj } = await pods.update(
      namespace,
      name,
      (current) => {
        if (!current) throw newConflict({ group: "", resource: "Pod" }, name, "the object has been deleted");
        const pod = structuredClone(current) as Pod;
        const uid = options.preconditions?.uid;
        if (uid && uid !== pod.metadata.uid) {
          throw newConflict(
            { group: "", resource: "Pod" },
            name,
            `the UID in the precondition (${uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`,
          );
        }
        const rv = options.preconditions?.resourceVersion;
        if (rv && rv !== pod.metadata.resourceVersion) {
          throw newConflict(
            { group: "", resource: "Pod" },
            name,
            `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`,
          );
        }
        setDisruptionTarget(pod);
        return pod;
      },
      { strategy: pods.strategy.status },
    );
    if (options.preconditions?.resourceVersion !== undefined) {
      // We wrote the pod ourselves: the precondition follows to our write.
      opts = {
        ...options,
        preconditions: { ...options.preconditions, resourceVersion: obj.metadata.resourceVersion },
      };
    }
  }
  await pods.delete(namespace, name, opts);
}

/** podutil.UpdatePodCondition(DisruptionTarget=True, EvictionByEvictionAPI): the transition time moves with the status. */
function setDisruptionTarget(pod: Pod): void {
  pod.status ??= {};
  const conditions = pod.status.conditions ?? [];
  const old = conditions.find((c) => c.type === "DisruptionTarget");
  const condition = {
    type: "DisruptionTarget",
    status: "True" as const,
    reason: "EvictionByEvictionAPI",
    message: "Eviction API: evicting",
    lastTransitionTime: old?.status === "True" ? old.lastTransitionTime : nowRFC3339(),
  };
  pod.status.conditions = [...conditions.filter((c) => c.type !== "DisruptionTarget"), condition];
}

// #region check-and-decrement
/**
 * checkAndDecrement: refuse (429) when the controller has not seen this budget's spec yet or no
 * disruption is left; otherwise take one and record the pod in `disruptedPods`, in one write of
 * the budget's status whose resourceVersion makes a concurrent eviction a Conflict.
 */
export async function checkAndDecrement(
  pdbs: Store,
  podName: string,
  pdb: PodDisruptionBudget,
  dryRun: boolean,
): Promise<void> {
  const name = pdb.metadata.name ?? "";
  const status = pdb.status ?? {
    disruptionsAllowed: 0,
    currentHealthy: 0,
    desiredHealthy: 0,
    expectedPods: 0,
  };
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0))
    throw createTooManyRequestsError(name);
  if (status.disruptionsAllowed < 0) {
    throw newForbidden(pdbResource, name, "pdb disruptions allowed is negative");
  }
  if (Object.keys(status.disruptedPods ?? {}).length > maxDisruptedPodSize) {
    throw newForbidden(
      pdbResource,
      name,
      "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
    );
  }
  if (status.disruptionsAllowed === 0) {
    const err = newTooManyRequests(tooManyMessage, 0);
    err.status.details!.causes = [
      {
        reason: "DisruptionBudget",
        message: `The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
      },
    ];
    throw err;
  }
  const updated: PodDisruptionBudget = structuredClone({ ...pdb, status });
  const s = updated.status!;
  s.disruptionsAllowed--;
  if (s.disruptionsAllowed === 0) updateDisruptionAllowedCondition(updated);
  if (dryRun) return;
  s.disruptedPods = { ...(s.disruptedPods ?? {}), [podName]: nowRFC3339() };
  await pdbs.update(pdb.metadata.namespace ?? "", name, () => updated, { strategy: pdbs.strategy.status });
}
// #endregion check-and-decrement

/** getPodDisruptionBudgets: the namespace's budgets whose selector matches; an empty selector matches none here. */
async function getPodDisruptionBudgets(pdbs: Store, pod: Pod): Promise<PodDisruptionBudget[]> {
  const list = await pdbs.list(pod.metadata.namespace ?? "", {});
  const out: PodDisruptionBudget[] = [];
  for (const item of list.items as PodDisruptionBudget[]) {
    const selector = labelSelectorAsSelector(item.spec?.selector);
    if (!selector.ok || selector.value.requirements.length === 0) continue;
    if (!selectorMatches(selector.value, pod.metadata.labels ?? {})) continue;
    out.push(item);
  }
  return out;
}

/** canIgnorePDB: a terminal, Pending or terminating pod causes no new disruption. */
export function canIgnorePDB(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return (
    phase === "Succeeded" || phase === "Failed" || phase === "Pending" || !!pod.metadata.deletionTimestamp
  );
}

function shouldEnforceResourceVersion(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !(phase === "Succeeded" || phase === "Failed" || pod.metadata.deletionTimestamp);
}

function isPodReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** propagateDryRun: the request's ?dryRun and the Eviction's deleteOptions.dryRun must agree. */
function propagateDryRun(eviction: Eviction, dryRun: string[]): DeleteOptions {
  const options = eviction.deleteOptions;
  if (!options) return { dryRun };
  if (!options.dryRun?.length) return { ...options, dryRun };
  if (dryRun.length === 0) return options;
  if (JSON.stringify(dryRun) !== JSON.stringify(options.dryRun)) {
    throw newBadRequest(
      `Non-matching dry-run options in request and content: [${dryRun.join(" ")}] and [${options.dryRun.join(" ")}]`,
    );
  }
  return options;
}

function withResourceVersion(options: DeleteOptions, resourceVersion: string | undefined): DeleteOptions {
  return { ...options, preconditions: { ...options.preconditions, resourceVersion } };
}

/** createTooManyRequestsError: a budget not processed yet, or a race lost — retry in 10 s. */
function createTooManyRequestsError(name: string) {
  const err = newTooManyRequests(tooManyMessage, 10);
  err.status.details!.causes = [
    {
      reason: "DisruptionBudget",
      message: `The disruption budget ${name} is still being processed by the server.`,
    },
  ];
  return err;
}

/** wait.ErrWaitTimeout after the last Conflict becomes a 504 Timeout with upstream's message. */
function rethrowTimeout(message: string) {
  return (e: unknown): never => {
    if (e instanceof WaitTimeout) {
      if (!message) throw e.last;
      throw newTimeoutError(message, 10);
    }
    throw e;
  };
}

/** UpdateDisruptionAllowedCondition (component-helpers): True/SufficientPods above zero, else False/InsufficientPods. */
function updateDisruptionAllowedCondition(pdb: PodDisruptionBudget): void {
  const status = pdb.status!;
  const allowed = status.disruptionsAllowed > 0;
  const condition = {
    type: DisruptionAllowedCondition,
    status: allowed ? ("True" as const) : ("False" as const),
    reason: allowed ? SufficientPodsReason : InsufficientPodsReason,
    message: "",
    observedGeneration: status.observedGeneration,
  };
  const conditions = status.conditions ?? [];
  const old = conditions.find((c) => c.type === DisruptionAllowedCondition);
  const lastTransitionTime = old && old.status === condition.status ? old.lastTransitionTime : nowRFC3339();
  status.conditions = [
    ...conditions.filter((c) => c.type !== DisruptionAllowedCondition),
    { ...condition, lastTransitionTime },
  ];
}
