/**
 * A pod of the process runtime's `course/sleeper` image in `default`, created through a cluster's
 * admin kubeconfig and waited for until Running — what a whole-cluster test needs before it can
 * ask about containers, logs or exec.
 * No upstream counterpart: upstream's e2e framework has its own (e2epod.CreatePod,
 * WaitForPodRunningInNamespace) over a test namespace.
 *
 * @upstream kubernetes/kubernetes test/e2e/framework/pod/wait.go (WaitForPodRunningInNamespace)
 * @chapter 08-cluster
 */
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import { waitFor } from "../../testing/wait-for.ts";

/** Creates pod `name` (one container `app`, image course/sleeper:1.0) and resolves once it is Running. */
export async function startSleeperPod(
  kubeconfig: string,
  timeoutMs: number,
  name = "sleeper",
): Promise<void> {
  const admin = newForConfig(buildConfigFromFlags("", kubeconfig, {}));
  try {
    await admin.coreV1.pods("default").create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { containers: [{ name: "app", image: "course/sleeper:1.0" }] },
    });
    await waitFor(
      `pod ${name} Running`,
      async () => (await admin.coreV1.pods("default").get(name)).status?.phase === "Running",
      timeoutMs,
    );
  } finally {
    admin.closeIdleConnections();
  }
}
