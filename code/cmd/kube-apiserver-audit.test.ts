/** kube-apiserver's audit flags: a policy file and `--audit-log-path=-` write events to stdout. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAPIServerFlags } from "./kube-apiserver.ts";
import { startCommand } from "./testing/command-process.ts";

const entry = fileURLToPath(new URL("./kube-apiserver.ts", import.meta.url));

describe("--audit-policy-file and --audit-log-path", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-flags-"));
    await writeFile(
      join(dir, "policy.yaml"),
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    );
    await writeFile(join(dir, "empty.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n");
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("are read together: auditing is on only with both", () => {
    expect(parseAPIServerFlags(["--audit-policy-file=p.yaml", "--audit-log-path=-"])).toMatchObject({
      run: { auditFiles: { policyFile: "p.yaml", logPath: "-" } },
    });
    expect(parseAPIServerFlags(["--audit-policy-file=p.yaml"])).toMatchObject({
      run: { auditFiles: undefined },
    });
  });

  it("`-` writes one JSON line per stage to standard output", async () => {
    const p = startCommand(entry, [
      "--insecure-port=0",
      `--audit-policy-file=${join(dir, "policy.yaml")}`,
      "--audit-log-path=-",
    ]);
    try {
      await p.waitForStderr("Serving insecurely on");
      const url = `http://${/Serving insecurely on (\S+)/.exec(p.stderr())?.[1]}`;
      const res = await fetch(`${url}/api/v1/namespaces/default`);
      await res.text();
      const id = res.headers.get("audit-id") ?? "";
      await p.waitForStdout(`"auditID":"${id}","stage":"ResponseComplete"`);
      const mine = p
        .stdout()
        .split("\n")
        .filter((l) => l.includes(id))
        .map((l) => JSON.parse(l));
      expect(mine.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseComplete"]);
      expect(mine[1]).toMatchObject({
        level: "Metadata",
        verb: "get",
        user: { username: "system:unsecured" },
      });
    } finally {
      p.kill();
    }
  });

  it("a policy with no rules stops the start", async () => {
    const p = startCommand(entry, [
      "--insecure-port=0",
      `--audit-policy-file=${join(dir, "empty.yaml")}`,
      "--audit-log-path=-",
    ]);
    try {
      await p.waitForExit();
      expect(p.stderr()).toContain(
        `kube-apiserver: failed to start: loading audit policy file: loaded illegal policy with 0 rules from file ${join(dir, "empty.yaml")}`,
      );
    } finally {
      p.kill();
    }
  });
});
