import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { setDefaults } from "../../../api/defaults.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { isStatusError, type StatusError } from "../../errors.ts";
import { newRESTStorage } from "../../registry/rest-storage.ts";
import type { Store } from "../../registry/store.ts";
import { newStorageBackend, type StorageBackend } from "../../storage/factory.ts";
import type { PluginContext } from "../context.ts";
import type { Attributes } from "../interfaces.ts";
import { newDefaultTolerationSeconds } from "./default-toleration-seconds.ts";
import { newLimitRanger } from "./limit-ranger.ts";
import { newNamespaceLifecycle } from "./namespace-lifecycle.ts";
import { ensureSystemPriorityClasses, newPriority } from "./priority.ts";
import {
  ensureDefaultServiceAccounts,
  mountServiceAccountToken,
  newServiceAccount,
} from "./service-account.ts";

let backend: StorageBackend;
let stores: Map<string, Store>;
let ctx: PluginContext;

beforeEach(async () => {
  backend = await newStorageBackend({});
  stores = newRESTStorage(backend, false);
  ctx = { store: (g, r) => stores.get(`${g}/${r}`) };
});
afterEach(async () => {
  await backend?.close();
});

const store = (key: string) => stores.get(key) as Store;
async function create(key: string, namespace: string, obj: KubeObject): Promise<KubeObject> {
  setDefaults(obj);
  return store(key).create(namespace, obj);
}
const ns = (name: string, phase?: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name },
  ...(phase ? { status: { phase } } : {}),
});
function pod(name: string, spec: Partial<Pod["spec"]> = {}, meta: Partial<Pod["metadata"]> = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", ...meta },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
  };
}
function attrs(
  op: Attributes["operation"],
  object: KubeObject | undefined,
  over: Partial<Attributes> = {},
): Attributes {
  const isNs = object?.kind === "Namespace";
  return {
    name: object?.metadata.name ?? "",
    namespace: isNs ? "" : (object?.metadata.namespace ?? "default"),
    resource: isNs
      ? { group: "", version: "v1", resource: "namespaces" }
      : { group: "", version: "v1", resource: "pods" },
    subresource: "",
    kind: { group: "", version: "v1", kind: object?.kind ?? "Pod" },
    operation: op,
    dryRun: false,
    object,
    userInfo: { name: "jane", groups: [] },
    ...over,
  };
}
async function refusal(p: Promise<unknown>): Promise<StatusError> {
  const e = await p.then(
    () => undefined,
    (err) => err,
  );
  if (!isStatusError(e)) throw new Error(`expected a Status error, got ${e}`);
  return e;
}

describe("NamespaceLifecycle", () => {
  it("refuses a create in a missing namespace with the namespace's 404", async () => {
    const e = await refusal(
      newNamespaceLifecycle(ctx).admit(attrs("CREATE", pod("web", {}, { namespace: "nope" }))),
    );
    expect([e.code, e.message]).toEqual([404, 'namespaces "nope" not found']);
  });

  it("refuses a create in a Terminating namespace, with the NamespaceTerminating cause; updates and deletes pass", async () => {
    await create("/namespaces", "", ns("going"));
    // The `kubernetes` finalizer keeps it: deleting marks it Terminating.
    await store("/namespaces").delete("", "going");
    expect(((await store("/namespaces").get("", "going")).status as { phase: string }).phase).toBe(
      "Terminating",
    );
    const plugin = newNamespaceLifecycle(ctx);
    const e = await refusal(plugin.admit(attrs("CREATE", pod("web", {}, { namespace: "going" }))));
    expect([e.code, e.message]).toEqual([
      403,
      'pods "web" is forbidden: unable to create new content in namespace going because it is being terminated',
    ]);
    expect(e.status.details?.causes).toEqual([
      {
        reason: "NamespaceTerminating",
        message: "namespace going is being terminated",
        field: "metadata.namespace",
      },
    ]);
    await plugin.admit(attrs("UPDATE", pod("web", {}, { namespace: "going" })));
    await plugin.admit(attrs("DELETE", undefined, { namespace: "going", name: "web" }));
  });

  it("keeps default, kube-system and kube-public; other namespaces may be deleted", async () => {
    const plugin = newNamespaceLifecycle(ctx);
    for (const name of ["default", "kube-system", "kube-public"]) {
      const e = await refusal(
        plugin.admit(attrs("DELETE", undefined, { ...attrs("DELETE", ns(name)), object: undefined })),
      );
      expect(e.message).toBe(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    await plugin.admit({ ...attrs("DELETE", ns("kube-node-lease")), object: undefined });
  });
});

describe("ServiceAccount", () => {
  it("defaults serviceAccountName and refuses a missing account with upstream's words", async () => {
    const plugin = newServiceAccount(ctx);
    const p = pod("web");
    const e = await refusal(plugin.admit(attrs("CREATE", p)));
    expect(e.message).toBe(
      'pods "web" is forbidden: error looking up service account default/default: serviceaccount "default" not found',
    );
    expect(p.spec.serviceAccountName).toBe("default");
  });

  it("mounts the projected token volume in every init and app container", async () => {
    await ensureDefaultServiceAccounts(store("/serviceaccounts"), ["default"]);
    const p = pod("web", {
      initContainers: [{ name: "init", image: "busybox" }],
      containers: [
        { name: "a", image: "nginx" },
        {
          name: "b",
          image: "nginx",
          volumeMounts: [{ name: "own", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }],
        },
      ],
    });
    await newServiceAccount(ctx).admit(attrs("CREATE", p));
    const volume = (p.spec.volumes ?? [])[0];
    expect(volume.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
          },
        },
      ],
    });
    const mount = {
      name: volume.name,
      readOnly: true,
      mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
    };
    expect(p.spec.initContainers?.[0].volumeMounts).toEqual([mount]);
    expect(p.spec.containers[0].volumeMounts).toEqual([mount]);
    expect(p.spec.containers[1].volumeMounts).toEqual([{ name: "own", mountPath: mount.mountPath }]);
  });

  it("does not mount when the pod or the account says automountServiceAccountToken: false (the pod wins)", async () => {
    await create("/serviceaccounts", "default", {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "quiet" },
      automountServiceAccountToken: false,
    } as KubeObject);
    await ensureDefaultServiceAccounts(store("/serviceaccounts"), ["default"]);
    const plugin = newServiceAccount(ctx);
    const bySA = pod("a", { serviceAccountName: "quiet" });
    await plugin.admit(attrs("CREATE", bySA));
    expect(bySA.spec.volumes).toBeUndefined();
    const byPod = pod("b", { automountServiceAccountToken: false } as Partial<Pod["spec"]>);
    await plugin.admit(attrs("CREATE", byPod));
    expect(byPod.spec.volumes).toBeUndefined();
    const podWins = pod("c", { serviceAccountName: "quiet", automountServiceAccountToken: true } as Partial<
      Pod["spec"]
    >);
    await plugin.admit(attrs("CREATE", podWins));
    expect(podWins.spec.volumes).toHaveLength(1);
  });

  it("leaves mirror pods alone but refuses one that names an account or a secret", async () => {
    const plugin = newServiceAccount(ctx);
    const mirror = { "kubernetes.io/config.mirror": "x" };
    const plain = pod("m", {}, { annotations: mirror });
    await plugin.admit(attrs("CREATE", plain));
    expect([plain.spec.serviceAccountName, plain.spec.volumes]).toEqual([undefined, undefined]);
    const withSA = await refusal(
      plugin.admit(attrs("CREATE", pod("m", { serviceAccountName: "x" }, { annotations: mirror }))),
    );
    expect(withSA.message).toBe('pods "m" is forbidden: a mirror pod may not reference service accounts');
    const withSecret = await refusal(
      plugin.admit(
        attrs(
          "CREATE",
          pod("m", { volumes: [{ name: "s", secret: { secretName: "x" } }] }, { annotations: mirror }),
        ),
      ),
    );
    expect(withSecret.message).toBe('pods "m" is forbidden: a mirror pod may not reference secrets');
  });

  it("keeps an existing kube-api-access volume", () => {
    const p = pod("web", { volumes: [{ name: "kube-api-access-abcde", emptyDir: {} }] });
    mountServiceAccountToken(p, () => "kube-api-access-zzzzz");
    expect(p.spec.volumes?.map((v) => v.name)).toEqual(["kube-api-access-abcde"]);
    expect(p.spec.containers[0].volumeMounts?.[0].name).toBe("kube-api-access-abcde");
  });

  it("leaves a volume with no name to validation (a 422 later), not a crash (found by the secured fuzz)", () => {
    const p = pod("web", { volumes: [{} as { name: string }] });
    mountServiceAccountToken(p, () => "kube-api-access-zzzzz");
    expect(p.spec.volumes?.map((v) => v.name)).toEqual([undefined, "kube-api-access-zzzzz"]);
  });
});

describe("Priority", () => {
  const pcAttrs = (op: Attributes["operation"], pc: KubeObject): Attributes => ({
    ...attrs(op, pc),
    namespace: "",
    resource: { group: "scheduling.k8s.io", version: "v1", resource: "priorityclasses" },
    kind: { group: "scheduling.k8s.io", version: "v1", kind: "PriorityClass" },
  });
  const pc = (name: string, value: number, extra: Record<string, unknown> = {}): KubeObject =>
    ({
      apiVersion: "scheduling.k8s.io/v1",
      kind: "PriorityClass",
      metadata: { name },
      value,
      ...extra,
    }) as KubeObject;

  it("resolves a class to priority and preemptionPolicy, system classes included", async () => {
    await ensureSystemPriorityClasses(store("scheduling.k8s.io/priorityclasses"));
    await create("scheduling.k8s.io/priorityclasses", "", pc("low", 10, { preemptionPolicy: "Never" }));
    const plugin = newPriority(ctx);
    const critical = pod("a", { priorityClassName: "system-node-critical" });
    await plugin.admit(attrs("CREATE", critical));
    expect([critical.spec.priority, critical.spec.preemptionPolicy]).toEqual([
      2000001000,
      "PreemptLowerPriority",
    ]);
    const low = pod("b", { priorityClassName: "low" });
    await plugin.admit(attrs("CREATE", low));
    expect([low.spec.priority, low.spec.preemptionPolicy]).toEqual([10, "Never"]);
  });

  it("gives a pod without a class the globalDefault's, or 0", async () => {
    const plugin = newPriority(ctx);
    const none = pod("a");
    await plugin.admit(attrs("CREATE", none));
    expect([none.spec.priorityClassName, none.spec.priority]).toEqual([undefined, 0]);
    await create("scheduling.k8s.io/priorityclasses", "", pc("normal", 100, { globalDefault: true }));
    const defaulted = pod("b");
    await plugin.admit(attrs("CREATE", defaulted));
    expect([defaulted.spec.priorityClassName, defaulted.spec.priority]).toEqual(["normal", 100]);
  });

  it("refuses a missing class, and a priority or policy the class does not give", async () => {
    await create("scheduling.k8s.io/priorityclasses", "", pc("low", 10));
    const plugin = newPriority(ctx);
    const missing = await refusal(plugin.admit(attrs("CREATE", pod("a", { priorityClassName: "nope" }))));
    expect(missing.message).toBe('pods "a" is forbidden: no PriorityClass with name nope was found');
    const wrong = await refusal(
      plugin.admit(attrs("CREATE", pod("a", { priorityClassName: "low", priority: 99 }))),
    );
    expect(wrong.message).toBe(
      'pods "a" is forbidden: the integer value of priority (99) must not be provided in pod spec; priority admission controller computed 10 from the given PriorityClass name',
    );
    const same = pod("a", { priorityClassName: "low", priority: 10 });
    await plugin.admit(attrs("CREATE", same));
    const policy = await refusal(
      plugin.admit(attrs("CREATE", pod("a", { priorityClassName: "low", preemptionPolicy: "Never" }))),
    );
    expect(policy.message).toBe(
      'pods "a" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name',
    );
  });

  it("keeps the stored priority on update, and allows one globalDefault", async () => {
    const plugin = newPriority(ctx);
    const updated = pod("a");
    await plugin.admit({
      ...attrs("UPDATE", updated),
      oldObject: pod("a", { priority: 7, preemptionPolicy: "Never" }),
    });
    expect([updated.spec.priority, updated.spec.preemptionPolicy]).toEqual([7, "Never"]);
    await create("scheduling.k8s.io/priorityclasses", "", pc("first", 1, { globalDefault: true }));
    const e = await refusal(plugin.validate(pcAttrs("CREATE", pc("second", 2, { globalDefault: true }))));
    expect(e.message).toBe(
      'priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist',
    );
    await plugin.validate(pcAttrs("UPDATE", pc("first", 1, { globalDefault: true })));
  });
});

describe("DefaultTolerationSeconds", () => {
  it("adds the not-ready and unreachable NoExecute tolerations with the configured seconds", async () => {
    const p = pod("a");
    await newDefaultTolerationSeconds({ notReadySeconds: 60 }).admit(attrs("CREATE", p));
    expect(p.spec.tolerations).toEqual([
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 },
      {
        key: "node.kubernetes.io/unreachable",
        operator: "Exists",
        effect: "NoExecute",
        tolerationSeconds: 300,
      },
    ]);
  });

  it("leaves a toleration the pod has, and a pod tolerating everything", async () => {
    const own = { key: "node.kubernetes.io/unreachable", operator: "Exists" as const, tolerationSeconds: 5 };
    const p = pod("a", { tolerations: [own] });
    await newDefaultTolerationSeconds().admit(attrs("CREATE", p));
    expect(p.spec.tolerations?.map((t) => t.key)).toEqual([
      "node.kubernetes.io/unreachable",
      "node.kubernetes.io/not-ready",
    ]);
    const all = pod("b", { tolerations: [{ operator: "Exists" }] });
    await newDefaultTolerationSeconds().admit(attrs("CREATE", all));
    expect(all.spec.tolerations).toEqual([{ operator: "Exists" }]);
  });
});

describe("LimitRanger", () => {
  const limitRange = (limits: unknown[]): KubeObject =>
    ({ apiVersion: "v1", kind: "LimitRange", metadata: { name: "lr" }, spec: { limits } }) as KubeObject;

  it("fills the default request and limit a container left out, and says so in an annotation", async () => {
    await create(
      "/limitranges",
      "default",
      limitRange([
        { type: "Container", default: { cpu: "500m", memory: "256Mi" }, defaultRequest: { cpu: "100m" } },
      ]),
    );
    const p = pod("a", {
      containers: [{ name: "web", image: "nginx", resources: { requests: { memory: "128Mi" } } }],
    });
    await newLimitRanger(ctx).admit(attrs("CREATE", p));
    expect(p.spec.containers[0].resources).toEqual({
      limits: { cpu: "500m", memory: "256Mi" },
      requests: { memory: "128Mi", cpu: "100m" },
    });
    expect(p.metadata.annotations?.["kubernetes.io/limit-ranger"]).toBe(
      "LimitRanger plugin set: cpu request for container web; cpu, memory limit for container web",
    );
  });

  it("refuses a container outside min and max, and a limit/request ratio above the maximum", async () => {
    await create(
      "/limitranges",
      "default",
      limitRange([
        {
          type: "Container",
          min: { cpu: "100m" },
          max: { cpu: "1", memory: "1Gi" },
          maxLimitRequestRatio: { cpu: "2" },
        },
      ]),
    );
    const plugin = newLimitRanger(ctx);
    const big = pod("a", {
      containers: [
        { name: "c", image: "x", resources: { requests: { cpu: "2" }, limits: { cpu: "2", memory: "2Gi" } } },
      ],
    });
    const e = await refusal(plugin.validate(attrs("CREATE", big)));
    expect(e.message).toBe(
      'pods "a" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi]',
    );
    const ratio = pod("b", {
      containers: [
        {
          name: "c",
          image: "x",
          resources: { requests: { cpu: "200m" }, limits: { cpu: "1", memory: "1Gi" } },
        },
      ],
    });
    expect((await refusal(plugin.validate(attrs("CREATE", ratio)))).message).toBe(
      'pods "b" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000',
    );
    const small = pod("c", {
      containers: [
        {
          name: "c",
          image: "x",
          resources: { requests: { cpu: "50m" }, limits: { cpu: "50m", memory: "1Gi" } },
        },
      ],
    });
    expect((await refusal(plugin.validate(attrs("CREATE", small)))).message).toBe(
      'pods "c" is forbidden: minimum cpu usage per Container is 100m, but request is 50m',
    );
    const fine = pod("d", {
      containers: [
        {
          name: "c",
          image: "x",
          resources: { requests: { cpu: "500m" }, limits: { cpu: "1", memory: "1Gi" } },
        },
      ],
    });
    await plugin.validate(attrs("CREATE", fine));
  });

  it("defaults a LimitRange's Container item: default from max, defaultRequest from default", async () => {
    const lr = await create(
      "/limitranges",
      "default",
      limitRange([{ type: "Container", max: { cpu: "1" }, min: { memory: "1Mi" } }]),
    );
    expect((lr.spec as { limits: unknown[] }).limits[0]).toEqual({
      type: "Container",
      max: { cpu: "1" },
      min: { memory: "1Mi" },
      default: { cpu: "1" },
      defaultRequest: { cpu: "1", memory: "1Mi" },
    });
  });
});
