import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import { newLogBackend } from "../../audit/backend.ts";
import type { Event } from "../../audit/event.ts";
import { loadPolicy } from "../../audit/policy.ts";
import { type APIServer, startAPIServer } from "../../server.ts";
import { plainKubectlEnv, runKubectl } from "../../testing/kubectl-env.ts";

const policy = (name: string, expression: string, extra = "") => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "${expression}"
${extra}`;

const binding = (
  name: string,
  policyName: string,
  actions: string,
  namespaceLabel: string,
) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${policyName}
  validationActions: [${actions}]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: ${namespaceLabel}
`;

describeWithTools("ValidatingAdmissionPolicy as kubectl meets it", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let auditLog: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "policy-kubectl-"));
    auditLog = join(dir, "audit.log");
    const auditPolicy = loadPolicy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n");
    server = await startAPIServer({
      insecurePort: 0,
      admission: {},
      audit: { policy: auditPolicy, backend: newLogBackend(auditLog) },
    });
    env = await plainKubectlEnv(dir, server.url);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[]) => runKubectl(env, args);
  async function ok(args: string[]): Promise<string> {
    const r = await kubectl(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.err}`);
    return r.out;
  }
  async function apply(name: string, yaml: string) {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, yaml);
    return kubectl(["apply", "-f", file]);
  }
  /** The policy cache follows its watch: retry a request until the policy is seen. */
  async function eventually(
    args: string[],
    done: (r: { out: string; err: string; code: number }) => boolean,
  ) {
    let r = await kubectl(args);
    for (let i = 0; i < 50 && !done(r); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      r = await kubectl(args);
    }
    return r;
  }

  it("applies a policy and a binding, and lists both", async () => {
    const p = await apply(
      "p",
      policy(
        "demo-policy.example.com",
        "object.spec.replicas <= 5",
        "    message: replicas must be no greater than 5\n",
      ),
    );
    expect([p.code, p.out, p.err]).toEqual([
      0,
      "validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy.example.com created\n",
      "",
    ]);
    const b = await apply("b", binding("demo-binding", "demo-policy.example.com", "Deny", "test"));
    expect(b.out).toBe(
      "validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding created\n",
    );
    expect(await ok(["get", "validatingadmissionpolicies"])).toMatch(
      /^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\ndemo-policy\.example\.com\s+1\s+<unset>\s+\d+s\n$/,
    );
    expect(await ok(["get", "validatingadmissionpolicybindings"])).toMatch(
      /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\ndemo-binding\s+demo-policy\.example\.com\s+<unset>\s+\d+s\n$/,
    );
    const stored = JSON.parse(
      await ok(["get", "validatingadmissionpolicy", "demo-policy.example.com", "-o", "json"]),
    );
    expect(stored.spec.matchConstraints).toMatchObject({
      matchPolicy: "Equivalent",
      namespaceSelector: {},
      objectSelector: {},
    });
  });

  it("denies a Deployment over the limit in a bound namespace, with upstream's message", async () => {
    await ok(["create", "namespace", "test"]);
    await ok(["label", "namespace", "test", "environment=test"]);
    const r = await eventually(
      ["create", "deployment", "big", "--image=nginx", "--replicas=6", "-n", "test"],
      (x) => x.code !== 0,
    );
    expect([r.code, r.err]).toEqual([
      1,
      `error: failed to create deployment: deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding' denied request: replicas must be no greater than 5\n`,
    ]);
    expect(await ok(["create", "deployment", "small", "--image=nginx", "--replicas=2", "-n", "test"])).toBe(
      "deployment.apps/small created\n",
    );
    // The binding narrows the policy: an unlabelled namespace is not judged.
    expect(await ok(["create", "deployment", "big", "--image=nginx", "--replicas=6", "-n", "default"])).toBe(
      "deployment.apps/big created\n",
    );
  });

  it("re-applying a changed policy updates it (generation 2) and the plugin recompiles it", async () => {
    const r = await apply(
      "p",
      policy(
        "demo-policy.example.com",
        "object.spec.replicas <= 3",
        "    message: replicas must be no greater than 3\n",
      ),
    );
    expect(r.out).toBe(
      "validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy.example.com configured\n",
    );
    expect(
      await ok([
        "get",
        "validatingadmissionpolicy",
        "demo-policy.example.com",
        "-o",
        "jsonpath={.metadata.generation}",
      ]),
    ).toBe("2");
    const denied = await eventually(
      ["create", "deployment", "four", "--image=nginx", "--replicas=4", "-n", "test", "--dry-run=server"],
      (x) => x.code !== 0,
    );
    expect(denied.err).toMatch(/denied request: replicas must be no greater than 3\n$/);
  });

  it("a Warn binding admits and kubectl prints the warning", async () => {
    await apply(
      "label-policy",
      policy(
        "team-label.example.com",
        "has(object.metadata.labels) && 'team' in object.metadata.labels",
        "    messageExpression: \"'deployment ' + object.metadata.name + ' has no team label'\"\n",
      ),
    );
    await apply("label-binding", binding("team-label-warn", "team-label.example.com", "Warn", "staging"));
    await ok(["create", "namespace", "staging"]);
    await ok(["label", "namespace", "staging", "environment=staging"]);
    const r = await eventually(
      ["create", "deployment", "web", "--image=nginx", "-n", "staging", "--dry-run=server"],
      (x) => x.err !== "",
    );
    expect([r.code, r.out, r.err]).toEqual([
      0,
      "deployment.apps/web created (server dry run)\n",
      "Warning: Validation failed for ValidatingAdmissionPolicy 'team-label.example.com' with binding 'team-label-warn': deployment web has no team label\n",
    ]);
  });

  it("an Audit binding admits and the audit log records the failure", async () => {
    await apply("audit-binding", binding("team-label-audit", "team-label.example.com", "Audit", "audited"));
    await ok(["create", "namespace", "audited"]);
    await ok(["label", "namespace", "audited", "environment=audited"]);
    const key = "validation.policy.admission.k8s.io/validation_failure";
    const recorded = async () =>
      (await readFile(auditLog, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Event)
        .find((e) => e.stage === "ResponseComplete" && e.objectRef?.name === "quiet" && e.annotations?.[key]);
    let event: Event | undefined;
    for (let i = 0; i < 50 && !event; i++) {
      const r = await kubectl([
        "create",
        "deployment",
        "quiet",
        "--image=nginx",
        "-n",
        "audited",
        "--dry-run=server",
      ]);
      expect([r.code, r.err]).toEqual([0, ""]);
      event = await recorded();
      if (!event) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(JSON.parse(event?.annotations?.[key] ?? "null")).toEqual([
      {
        message: "deployment quiet has no team label",
        policy: "team-label.example.com",
        binding: "team-label-audit",
        expressionIndex: 0,
        validationActions: ["Audit"],
      },
    ]);
  });

  it("refuses a policy whose expression does not compile, naming the field", async () => {
    const r = await apply("bad", policy("bad.example.com", "object.spec.replicas <= "));
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'The ValidatingAdmissionPolicy "bad.example.com" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas <= ": compilation failed: ERROR: <input>:1:25: Unexpected token: EOF\n',
    );
    // An object's fields are dyn here (no schema), so a wrong type shows only with literals.
    const wrongType = await apply("int", policy("int.example.com", "size('abc') + 1"));
    expect(wrongType.err).toBe(
      `The ValidatingAdmissionPolicy "int.example.com" is invalid: spec.validations[0].expression: Invalid value: "size('abc') + 1": must evaluate to bool but got int\n`,
    );
    expect(await ok(["get", "validatingadmissionpolicies", "-o", "name"])).not.toContain("bad.example.com");
  });
});
