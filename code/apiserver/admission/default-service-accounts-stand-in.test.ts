/**
 * chapter 4: controller-manager — the API server's stand-in for the serviceaccounts controller is
 * on by default (chapters 2–3) and off with `defaultServiceAccountsStandIn: false`, for a
 * cluster whose controller-manager runs the real controller.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Namespace } from "../../api/core.ts";
import { isNotFound } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { type APIServer, startAPIServer } from "../server.ts";

describe("the default-ServiceAccount stand-in", () => {
  let server: APIServer | undefined;
  let client: Clientset | undefined;
  afterEach(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  const start = async (standIn?: boolean) => {
    server = await startAPIServer({ insecurePort: 0, admission: {}, defaultServiceAccountsStandIn: standIn });
    client = newForConfig({ host: server.url });
    await client.coreV1
      .namespaces()
      .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } } as Namespace);
    return client;
  };

  it("makes `default` in every namespace by default", async () => {
    const c = await start();
    expect((await c.coreV1.serviceAccounts("n").get("default")).metadata.name).toBe("default");
    expect((await c.coreV1.serviceAccounts("kube-system").get("default")).metadata.name).toBe("default");
  });

  it("makes none when turned off: the controller-manager's controller does it", async () => {
    const c = await start(false);
    expect(
      isNotFound(
        await c.coreV1
          .serviceAccounts("n")
          .get("default")
          .catch((e) => e),
      ),
    ).toBe(true);
    expect(
      isNotFound(
        await c.coreV1
          .serviceAccounts("kube-system")
          .get("default")
          .catch((e) => e),
      ),
    ).toBe(true);
  });
});
