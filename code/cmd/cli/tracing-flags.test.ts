import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAPIServerFlags } from "../kube-apiserver.ts";
import { parseControllerManagerFlags } from "../kube-controller-manager.ts";
import { parseSchedulerFlags } from "../kube-scheduler.ts";
import { FlagError } from "./flag.ts";

const dir = mkdtempSync(join(tmpdir(), "tracing-flags-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const good = file(
  "good.yaml",
  "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4318\nsamplingRatePerMillion: 1000000\n",
);
const bad = file(
  "bad.yaml",
  "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nsamplingRatePerMillion: -5\n",
);

describe("--tracing-config-file", () => {
  const commands = [
    ["kube-apiserver", parseAPIServerFlags, []],
    ["kube-scheduler", parseSchedulerFlags, ["--master=http://127.0.0.1:1"]],
    ["kube-controller-manager", parseControllerManagerFlags, ["--master=http://127.0.0.1:1"]],
  ] as const;

  for (const [name, parse, base] of commands) {
    it(`${name}: reads the file into the component's options, and refuses a bad one in one line`, () => {
      const ok = parse([...base, `--tracing-config-file=${good}`]);
      expect(ok).toMatchObject({
        run: { tracing: { endpoint: "127.0.0.1:4318", samplingRatePerMillion: 1000000 } },
      });
      const without = parse([...base]);
      expect(without).toMatchObject({ run: {} });
      expect((without as { run: { tracing?: unknown } }).run.tracing).toBeUndefined();
      const err = parse([...base, `--tracing-config-file=${bad}`]);
      expect(err).toBeInstanceOf(FlagError);
      expect((err as FlagError).message).toBe(
        `${name}: --tracing-config-file: tracing.samplingRatePerMillion: Invalid value: -5: sampling rate must be positive`,
      );
    });
  }

  it("says in the scheduler's and controller-manager's help that it is a course flag", async () => {
    const help = parseSchedulerFlags(["--help"]) as { print: string };
    expect(help.print).toMatch(
      /--tracing-config-file.*COURSE FLAG \(upstream 1\.32 does not trace this component\)/,
    );
    const apiHelp = parseAPIServerFlags(["--help"]) as { print: string };
    expect(apiHelp.print).toMatch(/--tracing-config-file.*File with apiserver tracing configuration\./);
  });
});
