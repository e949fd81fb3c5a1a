// Mistake: writes on every sync — when the ConfigMap exists it is updated with the right data,
// without first comparing. Plausible: the result is always right, and an update "that changes
// nothing" looks free. It is not: every namespace event, every resync of every namespace becomes
// a PUT, and in a cluster of thousands of namespaces the controller alone keeps the API server
// and etcd busy. Upstream compares the cache's ConfigMap with what it should be and returns.
import type { ConfigMap } from "../../../code/api/core.ts";
import {
  Publisher as Correct,
  Description,
  DescriptionAnnotation,
  RootCACertConfigMapName,
} from "./publisher.ts";

export * from "./publisher.ts";

export class Publisher extends Correct {
  protected override async ensureConfigMap(name: string): Promise<void> {
    const cm = this.configMaps.byNamespace(name).get(RootCACertConfigMapName);
    if (!cm) return super.ensureConfigMap(name);
    const fixed: ConfigMap = structuredClone(cm);
    fixed.data = { "ca.crt": this.rootCA };
    fixed.metadata.annotations = { ...fixed.metadata.annotations, [DescriptionAnnotation]: Description };
    await this.client.coreV1.configMaps(name).update(fixed);
  }
}
