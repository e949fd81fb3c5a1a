/**
 * Tests that need a program outside Node: kubectl, etcd, etcdctl, chromium.
 *
 * Solves: such a test must never pass silently. In CI (`CI=true`) a missing program is a failing
 * test that names the install command; on a learner's machine it is a visible skip whose name says
 * what is missing and how to install it.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { execFileSync } from "node:child_process";
import { describe, it } from "vitest";

export interface Tool {
  name: string;
  path?: string;
  install: string;
}

export const installCommands: Record<string, string> = {
  chromium: "sudo apt-get install -y chromium",
  etcd: "sudo apt-get install -y etcd-server",
  etcdctl: "sudo apt-get install -y etcd-client",
  kubectl: "see https://kubernetes.io/docs/tasks/tools/ (v1.32)",
};

export function findTool(name: string): Tool {
  const install = installCommands[name] ?? `install ${name}`;
  try {
    const path = execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8", stdio: "pipe" }).trim();
    return path ? { name, path, install } : { name, install };
  } catch {
    return { name, install };
  }
}

export const inCI = process.env.CI === "true" || process.env.CI === "1";

/**
 * `describe` that runs when every tool is present; otherwise skips visibly — or, in CI, fails.
 */
export function describeWithTools(
  title: string,
  names: string[],
  body: (tools: Record<string, Tool>) => void,
): void {
  const tools = Object.fromEntries(names.map((n) => [n, findTool(n)]));
  const missing = Object.values(tools).filter((t) => !t.path);
  if (missing.length === 0) {
    describe(title, () => body(tools));
    return;
  }
  const what = missing.map((t) => `${t.name} not found — install: ${t.install}`).join("; ");
  if (inCI) {
    describe(title, () => {
      it(`needs ${missing.map((t) => t.name).join(", ")}`, () => {
        throw new Error(`required in CI: ${what}`);
      });
    });
  } else {
    describe.skip(`${title} [SKIPPED: ${what}]`, () => body(tools));
  }
}
