/**
 * policy/v1 PodDisruptionBudgets served by our API server and driven by the real kubectl:
 * `kubectl create pdb` and `get pdb` (upstream's columns), `describe pdb`, discovery's short
 * name, upstream's validation messages, and the status subresource (a spec change bumps the
 * generation, a status write keeps the spec).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { PodDisruptionBudget } from "../api/policy.ts";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import { type APIServer, startAPIServer } from "./server.ts";
import { plainKubectlEnv, runKubectl } from "./testing/kubectl-env.ts";

const pdbs = { group: "policy", version: "v1", resource: "poddisruptionbudgets" };

describe("poddisruptionbudgets over HTTP", () => {
  let server: APIServer;
  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("clears the status on create, bumps the generation on spec changes only, and /status keeps the spec", async () => {
    const client = newForConfig({ host: server.url, qps: -1 }).resource<PodDisruptionBudget>(pdbs, "default");
    const created = await client.create({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "web" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "web" } } },
      status: { disruptionsAllowed: 5, currentHealthy: 5, desiredHealthy: 0, expectedPods: 5 },
    });
    expect(created.metadata.generation).toBe(1);
    expect(created.status).toEqual({
      disruptionsAllowed: 0,
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
    });

    // A status write: the spec it carries is ignored, the generation stays.
    const statusWrite = await client.updateStatus({
      ...created,
      spec: { minAvailable: 3, selector: { matchLabels: { app: "other" } } },
      status: {
        observedGeneration: 1,
        disruptionsAllowed: 1,
        currentHealthy: 2,
        desiredHealthy: 1,
        expectedPods: 2,
      },
    });
    expect(statusWrite.spec?.minAvailable).toBe(1);
    expect(statusWrite.status?.disruptionsAllowed).toBe(1);
    expect(statusWrite.metadata.generation).toBe(1);

    // A spec write: the status it carries is ignored, the generation moves.
    const specWrite = await client.update({
      ...statusWrite,
      spec: { maxUnavailable: "50%", selector: { matchLabels: { app: "web" } } },
      status: { disruptionsAllowed: 9, currentHealthy: 9, desiredHealthy: 9, expectedPods: 9 },
    });
    expect(specWrite.metadata.generation).toBe(2);
    expect(specWrite.status?.disruptionsAllowed).toBe(1);

    // A negative count from a buggy controller is refused.
    await expect(
      client.updateStatus({ ...specWrite, status: { ...specWrite.status!, disruptionsAllowed: -1 } }),
    ).rejects.toThrow("status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0");
  });
});

describeWithTools("poddisruptionbudgets, driven by the real kubectl", ["kubectl"], () => {
  let dir: string;
  let server: APIServer;
  let env: NodeJS.ProcessEnv;
  const kubectl = async (...args: string[]) => runKubectl(env, args);
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.err}`);
    return r.out;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pdbctl-test-"));
    server = await startAPIServer({ insecurePort: 0 });
    env = await plainKubectlEnv(dir, server.url);
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("is discovered as pdb in group policy", async () => {
    const out = await ok("api-resources", "--api-group=policy", "--no-headers");
    expect(out.trim().split(/\s+/)).toEqual([
      "poddisruptionbudgets",
      "pdb",
      "policy/v1",
      "true",
      "PodDisruptionBudget",
    ]);
  });

  it("creates, lists and describes a budget", async () => {
    expect(await ok("create", "pdb", "web", "--selector=app=web", "--min-available=1")).toBe(
      "poddisruptionbudget.policy/web created\n",
    );
    await ok("create", "pdb", "db", "--selector=app=db", "--max-unavailable=50%");
    const table = await ok("get", "pdb");
    const rows = table
      .trim()
      .split("\n")
      .map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"]);
    expect(rows.slice(1).map((r) => r.slice(0, 4))).toEqual([
      ["db", "N/A", "50%", "0"],
      ["web", "1", "N/A", "0"],
    ]);
    const json = JSON.parse(await ok("get", "pdb", "web", "-o", "json")) as PodDisruptionBudget;
    expect(json.spec).toEqual({ minAvailable: 1, selector: { matchLabels: { app: "web" } } });
    const described = await ok("describe", "pdb", "web");
    expect(described).toMatch(/^Name:\s+web$/m);
    expect(described).toMatch(/^Min available:\s+1$/m);
    expect(described).toMatch(/^Selector:\s+app=web$/m);
    expect(described).toMatch(/^ +Allowed disruptions: +0$/m);
  });

  it("refuses a budget with both bounds, or above 100%, with upstream's messages", async () => {
    const create = async (name: string, spec: string) => {
      const file = join(dir, `${name}.yaml`);
      await writeFile(
        file,
        `apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: ${name}\nspec:\n${spec}`,
      );
      return kubectl("create", "-f", file);
    };
    const bothBounds = await create("both", "  minAvailable: 1\n  maxUnavailable: 1\n");
    expect(bothBounds.code).not.toBe(0);
    expect(bothBounds.err).toContain("spec: Invalid value:");
    expect(bothBounds.err).toContain("minAvailable and maxUnavailable cannot be both set");
    const tooMuch = await create("too-much", "  minAvailable: 150%\n");
    expect(tooMuch.code).not.toBe(0);
    expect(tooMuch.err).toContain('spec.minAvailable: Invalid value: "150%": must not be greater than 100%');
  });
});
