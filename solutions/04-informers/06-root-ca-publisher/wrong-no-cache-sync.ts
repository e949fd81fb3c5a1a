// Mistake: the workers start at once, without waiting for the caches to sync. Plausible: the
// informers were started, and the first namespace events are already arriving. But until the
// ConfigMap cache is synced, "not in the cache" means "not listed yet": every namespace looks
// as if it lacked its ConfigMap, and the controller sends a create for each one that exists
// (AlreadyExists, times the number of namespaces, at every controller-manager restart).
import { Publisher as Correct } from "./publisher.ts";

export * from "./publisher.ts";

export class Publisher extends Correct {
  override async run(workers: number, signal: AbortSignal): Promise<void> {
    signal.addEventListener("abort", () => this.queue.shutDown(), { once: true });
    const worker = async () => {
      while (await this.processNextWorkItem()) {}
    };
    await Promise.all(Array.from({ length: workers }, worker));
  }
}
