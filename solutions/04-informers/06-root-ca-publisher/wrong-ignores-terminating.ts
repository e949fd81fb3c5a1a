// Mistake: the sync checks that the namespace exists but not its phase. Plausible: a namespace
// being deleted still exists. But a Terminating namespace is being emptied by the namespace
// controller; a ConfigMap created there is deleted again — or, with the NamespaceLifecycle
// admission plugin, refused — and the two controllers fight until the namespace is gone.
import { Publisher as Correct } from "./publisher.ts";

export * from "./publisher.ts";

export class Publisher extends Correct {
  protected override async syncNamespace(name: string): Promise<void> {
    if (!this.namespaces.get(name)) return;
    await this.ensureConfigMap(name);
  }
}
