/**
 * chapter 4: namespace controller — what the server must do for the controller: a deleted
 * namespace stays Terminating, held by spec.finalizers, through the controller's status
 * updates; the finalize that empties spec.finalizers deletes it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Namespace } from "../../api/core.ts";
import { isNotFound } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { type APIServer, startAPIServer } from "../server.ts";

describe("a terminating namespace (ShouldDeleteNamespaceDuringUpdate)", () => {
  let server: APIServer;
  let client: Clientset;
  beforeEach(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url });
  });
  afterEach(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  it("survives a status update and goes with the finalize", async () => {
    const namespaces = client.coreV1.namespaces();
    await namespaces.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "held" } } as Namespace);
    await namespaces.delete("held");
    const terminating = await namespaces.get("held");
    expect(terminating.status?.phase).toBe("Terminating");
    expect(terminating.spec?.finalizers).toEqual(["kubernetes"]);

    terminating.status = {
      ...terminating.status,
      conditions: [{ type: "NamespaceContentRemaining", status: "True", reason: "SomeResourcesRemain" }],
    };
    const updated = await namespaces.updateStatus(terminating);
    expect(updated.status?.conditions?.[0]?.reason).toBe("SomeResourcesRemain");
    expect((await namespaces.get("held")).metadata.deletionTimestamp).toBeTruthy();

    updated.spec = { finalizers: [] };
    await namespaces.client
      .put()
      .resource("namespaces")
      .name("held")
      .subResource("finalize")
      .body(updated)
      .do();
    const gone = await namespaces.get("held").catch((e) => e);
    expect(isNotFound(gone)).toBe(true);
  });
});
