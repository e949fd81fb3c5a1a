/**
 * DryRunnableStorage — the registry's storage, with a `dryRun` switch on every write: a dry run
 * reads what it must, runs every check, and answers what the write would have stored, without
 * writing. Upstream: k8s.io/apiserver pkg/registry/generic/registry/dryrun.go.
 *
 * Solves:
 * - `kubectl apply --dry-run=server` must see everything a real write would do — defaults, the
 *   strategy, validation, AlreadyExists, preconditions, a graceful delete's deletionTimestamp —
 *   so the registry runs its whole path, and only the last step, the storage write, is skipped;
 * - that step is skipped in one place, below the registry, rather than by each of its paths
 *   jumping out early (an early exit is a path a dry run takes and a real write does not).
 *
 * Invariants:
 * - with `dryRun` false every call is the wrapped storage's, unchanged;
 * - with `dryRun` true nothing is written: create answers AlreadyExists if the key is taken and
 *   the object otherwise; guaranteedUpdate calls tryUpdate once on the stored object (after the
 *   preconditions) and answers its result; delete answers the stored object after the
 *   preconditions and the caller's validation;
 * - reads and watches pass straight through.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go (DryRunnableStorage: Create, Delete, GuaranteedUpdate, copyInto)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { type GroupResource, newAlreadyExists } from "../errors.ts";
import { checkPreconditions, nameOfKey } from "../storage/errors.ts";
import type {
  GetOptions,
  GuaranteedUpdateOptions,
  Interface,
  ListOptions,
  ListResult,
  Preconditions,
  UpdateFunc,
  Watch,
  WatchOptions,
} from "../storage/interfaces.ts";

export class DryRunnableStorage implements Interface {
  constructor(
    readonly storage: Interface,
    /** Names the resource in the AlreadyExists and Conflict a dry run answers itself. */
    private readonly gr: GroupResource,
  ) {}

  async create(key: string, obj: KubeObject, dryRun = false): Promise<KubeObject> {
    if (!dryRun) return this.storage.create(key, obj);
    if (await this.storage.get(key, { ignoreNotFound: true }))
      throw newAlreadyExists(this.gr, nameOfKey(key));
    return structuredClone(obj); // copyInto: the answer is what would have been stored
  }

  async guaranteedUpdate(
    key: string,
    opts: GuaranteedUpdateOptions,
    tryUpdate: UpdateFunc,
    dryRun = false,
  ): Promise<KubeObject> {
    if (!dryRun) return this.storage.guaranteedUpdate(key, opts, tryUpdate);
    const current = await this.storage.get(key, { ignoreNotFound: opts.ignoreNotFound });
    const preconditionError = checkPreconditions(this.gr, key, current, opts.preconditions);
    if (preconditionError) throw preconditionError;
    // One try is enough: nothing is written, so there is no race to lose.
    return structuredClone(await tryUpdate(current));
  }

  async delete(
    key: string,
    preconditions?: Preconditions,
    validateDeletion?: (current: KubeObject) => void | Promise<void>,
    dryRun = false,
  ): Promise<KubeObject> {
    if (!dryRun) return this.storage.delete(key, preconditions, validateDeletion);
    const current = (await this.storage.get(key)) as KubeObject;
    const preconditionError = checkPreconditions(this.gr, key, current, preconditions);
    if (preconditionError) throw preconditionError;
    if (validateDeletion) await validateDeletion(structuredClone(current));
    return current;
  }

  get(key: string, opts?: GetOptions): Promise<KubeObject | undefined> {
    return this.storage.get(key, opts);
  }

  getList(key: string, opts: ListOptions): Promise<ListResult> {
    return this.storage.getList(key, opts);
  }

  watch(key: string, opts: WatchOptions): Promise<Watch> {
    return this.storage.watch(key, opts);
  }

  currentResourceVersion(): Promise<string> {
    return this.storage.currentResourceVersion();
  }

  close(): Promise<void> {
    return this.storage.close();
  }
}
