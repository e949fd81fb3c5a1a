/**
 * The grader's cluster, seen from an exercise test: an admin Clientset for the cluster the grader
 * started, and a fresh namespace per test, deleted afterwards.
 * No upstream counterpart in the product; upstream's e2e framework does the same for each spec
 * (kubernetes/kubernetes test/e2e/framework/framework.go: BeforeEach creates a namespace
 * `<basename>-<random>`, AfterEach deletes it).
 *
 * Solves:
 * - chapter 8's exercises plug the learner's code into a live cluster, but must not each start
 *   one: scripts/grader-cluster.setup.ts starts one for the whole run and `provide`s its admin
 *   kubeconfig; this helper `inject`s it;
 * - the solution, the stub and every recorded mistake of an exercise run at the same time against
 *   that one cluster: each test gets a namespace of its own (a random suffix), so no variant ever
 *   lists, watches or deletes another's objects.
 *
 * It lives in code/cmd/testing/ beside LocalCluster, not in exercises/: every exercise test of
 * the chapter imports it the way they import the rest of code/, the grader transforms it once for
 * all variants (code/ is shared between projects, scripts/variants.config.ts), and no exercise
 * folder holds a file a learner would take for a stub.
 *
 * Invariants:
 * - a namespace is created before its test and deleted after it, whether the test passed or not;
 *   the deletion is not awaited to completion (the namespace controller finishes it), so a slow
 *   garbage collection never counts against the learner;
 * - polling is gentle (every 250 ms): a dozen variants poll the same API server at once.
 *
 * @upstream none — test harness
 * @chapter 08-cluster
 */
import { execFile } from "node:child_process";
import { afterAll, afterEach, beforeAll, beforeEach, inject } from "vitest";
import type { Namespace } from "../../api/core.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";

/** What the grader's setup provides. */
export interface GraderClusterInfo {
  /** The admin kubeconfig (kubernetes-admin, system:masters). */
  kubeconfig: string;
  /** The cluster's node names. */
  nodes: string[];
}

declare module "vitest" {
  export interface ProvidedContext {
    graderCluster?: GraderClusterInfo;
  }
}

export interface GraderCluster {
  /** The admin's client. */
  readonly admin: Clientset;
  /** The current test's namespace (one per test, or per file with `namespacePer: "file"`). */
  readonly namespace: string;
  readonly info: GraderClusterInfo;
  /** The real kubectl as admin; never rejects (the exit code is in the result). */
  kubectl(args: string[], timeoutMs?: number): Promise<{ code: number; stdout: string; stderr: string }>;
}

const randomSuffix = () => Math.random().toString(36).slice(2, 7);

/**
 * Call at the top of a test file (or a describe block). `prefix` names the namespaces
 * (`probe-tuning-x7k2q`); `namespacePer: "file"` shares one namespace between the block's tests,
 * for tests that follow one object through its life in steps.
 */
export function useGraderCluster(
  prefix: string,
  opts: { namespacePer?: "test" | "file" } = {},
): GraderCluster {
  let admin: Clientset | undefined;
  let info: GraderClusterInfo | undefined;
  let namespace: string | undefined;
  const create = async () => {
    const name = `${prefix}-${randomSuffix()}`;
    const ns: Namespace = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, labels: { "course.dev/grader": "true" } },
    };
    await admin!.coreV1.namespaces().create(ns);
    namespace = name;
  };
  const remove = async () => {
    const name = namespace;
    namespace = undefined;
    if (name)
      await admin?.coreV1
        .namespaces()
        .delete(name)
        .catch(() => undefined);
  };
  beforeAll(() => {
    info = inject("graderCluster");
    if (!info) {
      throw new Error(
        "no grader cluster: chapter 8's exercise tests run through the grader (npm run grade -- 8), which starts one",
      );
    }
    admin = newForConfig(buildConfigFromFlags("", info.kubeconfig, {}));
  });
  if (opts.namespacePer === "file") {
    beforeAll(create, 60_000);
    afterAll(remove, 60_000);
  } else {
    beforeEach(create, 60_000);
    afterEach(remove, 60_000);
  }
  afterAll(() => admin?.closeIdleConnections());
  return {
    get admin() {
      if (!admin) throw new Error("the grader cluster is used before its beforeAll ran");
      return admin;
    },
    get namespace() {
      if (!namespace) throw new Error("no namespace: use it inside a test");
      return namespace;
    },
    get info() {
      if (!info) throw new Error("the grader cluster is used before its beforeAll ran");
      return info;
    },
    kubectl: (args, timeoutMs = 60_000) =>
      new Promise((resolve) => {
        execFile(
          "kubectl",
          [`--kubeconfig=${info?.kubeconfig}`, ...args],
          { timeout: timeoutMs, maxBuffer: 16 << 20 },
          (err, stdout, stderr) => {
            const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
            resolve({ code, stdout, stderr: err && !stderr ? String(err) : stderr });
          },
        );
      }),
  };
}

/**
 * Asks `check` every 250 ms until it returns a value; throws `timed out waiting for <what>` (with
 * the last answer it gave, to say where it stood) after `ms`. A check may throw to fail at once
 * (a container restarted that never should have).
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  ms: number,
  describeLast?: () => string,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${ms / 1000} s waiting for ${what}${describeLast ? `: ${describeLast()}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
