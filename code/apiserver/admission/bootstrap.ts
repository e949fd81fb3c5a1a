/**
 * Admission's start-up objects — what the built-in plugins expect to find the moment the API
 * server serves: the system PriorityClasses, and a `default` ServiceAccount in the system
 * namespaces.
 *
 * Solves:
 * - `priorityClassName: system-node-critical` must resolve on the first pod; upstream's
 *   scheduling REST storage creates both system classes in a post-start hook;
 * - the ServiceAccount plugin refuses a pod whose account does not exist, and upstream's
 *   serviceaccounts controller (kube-controller-manager, chapter 4) creates `default` in every
 *   namespace. Until that controller exists, the API server stands in for it: `default` in the
 *   system namespaces at start, and in every namespace created afterwards, as part of the
 *   namespace's create (`withDefaultServiceAccounts`).
 * - chapter 4's controller-manager replaces the stand-in with the real controller
 *   (code/controllers/serviceaccount/serviceaccounts-controller.ts); startAPIServer's
 *   `defaultServiceAccountsStandIn: false` turns the stand-in off for such a cluster (it stays on
 *   by default, so chapters 2–3 and kube-apiserver behave as before).
 *
 * What upstream does differently: the controller creates the account a moment *after* the
 * namespace, so a pod created at once can still be refused (`serviceaccount "default" not found`)
 * and a client retries; here the account exists when the namespace's create returns.
 *
 * Invariants: runs only when admission is on (chapters 1–2 start without it and see no new
 * objects); creating what already exists is not an error, so a restart over the same storage
 * is fine.
 *
 * @upstream kubernetes/kubernetes pkg/registry/scheduling/rest/storage_scheduling.go (PostStartHook, AddSystemPriorityClasses)
 * @upstream kubernetes/kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go (the `default` account)
 * @chapter 03-api-security
 */
import type { Store } from "../registry/store.ts";
import { ensureSystemPriorityClasses } from "./plugin/priority.ts";
import { ensureDefaultServiceAccounts } from "./plugin/service-account.ts";

// #region bootstrap
export async function ensureAdmissionObjects(
  stores: Map<string, Store>,
  enabled: readonly string[],
  systemNamespaces: readonly string[],
  // chapter 4: false when the controller-manager's serviceaccounts controller does it.
  opts: { defaultServiceAccounts?: boolean } = {},
): Promise<void> {
  await ensureSystemPriorityClasses(stores.get("scheduling.k8s.io/priorityclasses") as Store);
  if (enabled.includes("ServiceAccount") && (opts.defaultServiceAccounts ?? true)) {
    await ensureDefaultServiceAccounts(stores.get("/serviceaccounts") as Store, systemNamespaces);
  }
}
// #endregion bootstrap

// #region default-service-accounts
/**
 * The serviceaccounts controller's job, done in the namespaces store until chapter 4's
 * controller-manager does it: every namespace created (not a dry run) gets its `default` account.
 */
export function withDefaultServiceAccounts(namespaces: Store, accounts: Store): void {
  const create = namespaces.create.bind(namespaces);
  namespaces.create = async (namespace, obj, opts = {}) => {
    const created = await create(namespace, obj, opts);
    if (!opts.dryRun) await ensureDefaultServiceAccounts(accounts, [created.metadata.name as string]);
    return created;
  };
}
// #endregion default-service-accounts
