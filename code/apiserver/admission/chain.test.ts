import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { type APIServer, startAPIServer } from "../server.ts";
import { AdmissionChain } from "./chain.ts";
import type { Attributes, MutationInterface, ValidationInterface } from "./interfaces.ts";
import { enabledPluginNames } from "./plugins.ts";

function attrs(operation: Attributes["operation"], object?: KubeObject): Attributes {
  return {
    name: "web",
    namespace: "default",
    resource: { group: "", version: "v1", resource: "pods" },
    subresource: "",
    kind: { group: "", version: "v1", kind: "Pod" },
    operation,
    dryRun: false,
    object,
    userInfo: { name: "jane", groups: [] },
  };
}

describe("the admission chain", () => {
  it("runs every mutating plugin before any validating one, each only for the operations it handles", async () => {
    const seen: string[] = [];
    const both: MutationInterface & ValidationInterface = {
      name: "Both",
      handles: (op) => op === "CREATE",
      admit: async () => void seen.push("Both.admit"),
      validate: async () => void seen.push("Both.validate"),
    };
    const mutating: MutationInterface = {
      name: "Mutating",
      handles: () => true,
      admit: async (a) => {
        seen.push("Mutating.admit");
        if (a.object) a.object.metadata.labels = { admitted: "yes" };
      },
    };
    const validating: ValidationInterface = {
      name: "Validating",
      handles: () => true,
      validate: async (a) => {
        seen.push(`Validating.validate:${a.object?.metadata.labels?.admitted}`);
      },
    };
    const chain = new AdmissionChain([both, validating, mutating]);
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" } } as KubeObject;
    await chain.admit(attrs("CREATE", pod));
    await chain.validate(attrs("CREATE", pod));
    expect(seen).toEqual(["Both.admit", "Mutating.admit", "Both.validate", "Validating.validate:yes"]);
    seen.length = 0;
    await chain.admit(attrs("DELETE"));
    await chain.validate(attrs("DELETE"));
    expect(seen).toEqual(["Mutating.admit", "Validating.validate:undefined"]);
  });

  it("stops at the first refusal", async () => {
    const seen: string[] = [];
    const refuse: ValidationInterface = {
      name: "Refuse",
      handles: () => true,
      validate: async () => {
        throw new Error("no");
      },
    };
    const after: ValidationInterface = {
      name: "After",
      handles: () => true,
      validate: async () => void seen.push("After"),
    };
    await expect(new AdmissionChain([refuse, after]).validate(attrs("CREATE"))).rejects.toThrow("no");
    expect(seen).toEqual([]);
  });
});

describe("--enable-admission-plugins and --disable-admission-plugins", () => {
  it("adds to and takes from the defaults, always in upstream's order", () => {
    const names = enabledPluginNames({
      enablePlugins: ["AlwaysDeny", "NodeRestriction"],
      disablePlugins: ["ServiceAccount"],
    });
    expect(names.slice(0, 4)).toEqual([
      "NamespaceLifecycle",
      "LimitRanger",
      "NodeRestriction",
      "TaintNodesByCondition",
    ]);
    expect(names).not.toContain("ServiceAccount");
    expect(names.slice(-3)).toEqual(["ValidatingAdmissionWebhook", "ResourceQuota", "AlwaysDeny"]);
  });

  it("refuses an unknown plugin and one named in both flags, with upstream's words", () => {
    expect(() => enabledPluginNames({ enablePlugins: ["Nope"] })).toThrow(
      'enable-admission-plugins plugin "Nope" is unknown',
    );
    expect(() => enabledPluginNames({ disablePlugins: ["Nope"] })).toThrow(
      'disable-admission-plugins plugin "Nope" is unknown',
    );
    expect(() => enabledPluginNames({ enablePlugins: ["Priority"], disablePlugins: ["Priority"] })).toThrow(
      "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
    );
  });
});

describe("an API server with AlwaysDeny", () => {
  let server: APIServer;
  const lines: string[] = [];
  beforeAll(async () => {
    server = await startAPIServer({
      insecurePort: 0,
      admission: { enablePlugins: ["AlwaysDeny"] },
      log: (l) => lines.push(l),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web" },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  };
  const send = (method: string, path: string, body?: unknown, type = "application/json") =>
    fetch(`${server.url}${path}`, {
      method,
      headers: body ? { "Content-Type": type } : {},
      body: body ? JSON.stringify(body) : undefined,
    }).then(async (r) => ({
      code: r.status,
      body: (await r.json()) as { message?: string; reason?: string },
    }));

  it("logs the chain it loaded, in order", () => {
    expect(
      lines.some((l) =>
        /^Loaded \d+ validating admission controller\(s\) successfully in the following order: .*AlwaysDeny\.$/.test(
          l,
        ),
      ),
    ).toBe(true);
  });

  it("refuses a create, dry run or not, before anything is stored", async () => {
    for (const query of ["", "?dryRun=All"]) {
      const r = await send("POST", `/api/v1/namespaces/default/pods${query}`, pod);
      expect([r.code, r.body.reason, r.body.message]).toEqual([
        403,
        "Forbidden",
        'pods "web" is forbidden: admission control is denying all modifications',
      ]);
    }
    expect((await send("GET", "/api/v1/namespaces/default/pods/web")).code).toBe(404);
  });

  it("refuses a PUT that would create, a patch (apply) and a delete", async () => {
    const put = await send("PUT", "/api/v1/namespaces/default/configmaps/c", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
    });
    expect(put.code).toBe(404); // configmaps do not create on update: the store answers before admission
    const apply = await send(
      "PATCH",
      "/api/v1/namespaces/default/configmaps/c?fieldManager=t",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
      "application/apply-patch+yaml",
    );
    expect([apply.code, apply.body.message]).toEqual([
      403,
      'configmaps "c" is forbidden: admission control is denying all modifications',
    ]);
    const del = await send("DELETE", "/api/v1/namespaces/default");
    expect([del.code, del.body.reason]).toEqual([403, "Forbidden"]);
    expect((await send("GET", "/api/v1/namespaces/default")).code).toBe(200);
  });
});
