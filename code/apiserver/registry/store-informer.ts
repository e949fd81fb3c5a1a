/**
 * StoreInformer — the smallest informer: list a registry store, then watch it from the list's
 * resourceVersion, and list again whenever the watch ends; callbacks see every change once, in
 * order, with the object as it was before. Upstream: client-go's tools/cache reflector.go
 * (ListAndWatch) and shared_informer.go, which kube-apiserver's own authorizers read.
 *
 * Solves: the parts of the API server that keep state derived from objects (the RBAC index,
 * the Node authorizer's graph) must follow every write without reading storage per request, and
 * must not lose a change when a watch breaks.
 *
 * Invariants:
 * - `synced` resolves after the first list has been handed to the callbacks (HasSynced), and
 *   rejects if that first list fails;
 * - a relist is a Replace: an object the cache knew but the list lacks is delivered as deleted;
 * - `update` always gets the object as last seen, so a callback can diff old against new.
 *
 * What upstream does differently: its informers watch through the API server's loopback client
 * and a shared cache; these read the registry stores directly. Chapter 4 builds the real
 * reflector, DeltaFIFO and shared informer in code/client/.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/reflector.go (ListAndWatch)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/controller.go (ResourceEventHandlerFuncs)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../api/meta.ts";
import type { Watch } from "../storage/interfaces.ts";
import type { Store } from "./store.ts";

/** An informer's three callbacks (ResourceEventHandlerFuncs). */
export interface InformerHandlers {
  add(obj: KubeObject): void;
  update(old: KubeObject, obj: KubeObject): void;
  delete(obj: KubeObject): void;
}

// #region informer
/**
 * List, then watch from the list's resourceVersion; when the watch ends, list again. The
 * handlers see every change once, in order, with the object as it was before.
 */
export class StoreInformer {
  /** namespace/name → the object as last seen. */
  private readonly known = new Map<string, KubeObject>();
  private watch: Watch | undefined;
  private stopped = false;
  readonly synced: Promise<void>;
  private markSynced!: () => void;
  private failSync!: (e: unknown) => void;
  private listed = false;

  constructor(
    private readonly store: Store,
    private readonly handlers: InformerHandlers,
  ) {
    this.synced = new Promise((resolve, reject) => {
      this.markSynced = resolve;
      this.failSync = reject;
    });
  }

  private keyOf(obj: KubeObject): string {
    return `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
  }

  private upsert(obj: KubeObject): void {
    const key = this.keyOf(obj);
    const old = this.known.get(key);
    this.known.set(key, obj);
    if (old) this.handlers.update(old, obj);
    else this.handlers.add(obj);
  }

  private remove(obj: KubeObject): void {
    const key = this.keyOf(obj);
    const old = this.known.get(key);
    this.known.delete(key);
    this.handlers.delete(old ?? obj);
  }

  /** The reflector's Replace: the list is the truth, whatever the cache believed. */
  private replace(items: KubeObject[]): void {
    const listed = new Set(items.map((o) => this.keyOf(o)));
    for (const [key, old] of [...this.known]) if (!listed.has(key)) this.remove(old);
    for (const item of items) this.upsert(item);
  }

  async run(): Promise<void> {
    let backoffMs = 100;
    while (!this.stopped) {
      try {
        const list = await this.store.list("", {});
        this.replace(list.items);
        this.listed = true;
        this.markSynced();
        this.watch = await this.store.watch("", { resourceVersion: list.resourceVersion });
        if (this.stopped) this.watch.stop();
        for await (const ev of this.watch) {
          if (ev.type === "ADDED" || ev.type === "MODIFIED") this.upsert(ev.object);
          else if (ev.type === "DELETED") this.remove(ev.object);
          else if (ev.type === "ERROR") break; // too old a resourceVersion: list again
        }
        backoffMs = 100;
      } catch (e) {
        // The first list failing is the caller's to see (a server that cannot read its own
        // stores must not start); later failures are retried with a backoff.
        if (!this.listed) return this.failSync(e);
        if (this.stopped) return;
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5000);
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
  }
}
// #endregion informer
