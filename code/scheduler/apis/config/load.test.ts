import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigLoadError, loadConfig, loadConfigFromFile } from "./load.ts";
import { validateKubeSchedulerConfiguration } from "./validation.ts";

const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
const dir = mkdtempSync(join(tmpdir(), "schedconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function loadError(text: string): ConfigLoadError {
  try {
    loadConfig(text);
  } catch (e) {
    if (e instanceof ConfigLoadError) return e;
    throw e;
  }
  throw new Error("loaded without error");
}

describe("loadConfigFromFile", () => {
  it("loads the two-profile example, defaulted and valid", () => {
    const cfg = loadConfigFromFile(
      join(import.meta.dirname, "..", "..", "..", "..", "chapters", "05-scheduler", "two-profiles.yaml"),
    );
    expect(() => validateKubeSchedulerConfiguration(cfg)).not.toThrow();
    expect(cfg.clientConnection).toMatchObject({ qps: 100, burst: 200 });
    expect(cfg.leaderElection.leaderElect).toBe(false);
    expect(cfg.percentageOfNodesToScore).toBe(50);
    expect(cfg.profiles.map((p) => p.schedulerName)).toEqual(["default-scheduler", "bin-packing"]);
    const bin = cfg.profiles[1]!;
    const enabled = bin.plugins.multiPoint!.enabled!;
    expect(enabled.find((p) => p.name === "NodeResourcesFit")).toEqual({
      name: "NodeResourcesFit",
      weight: 5,
    });
    expect(enabled.map((p) => p.name)).not.toContain("NodeResourcesBalancedAllocation");
    // memory's weight was left out: it defaults to 1.
    expect(bin.pluginConfig!.find((pc) => pc.name === "NodeResourcesFit")!.args).toEqual({
      scoringStrategy: {
        type: "MostAllocated",
        resources: [
          { name: "cpu", weight: 2 },
          { name: "memory", weight: 1 },
        ],
      },
    });
  });

  it("a missing file: Go's open error and the fix, on one line", () => {
    const path = join(dir, "nope.yaml");
    let err: ConfigLoadError | undefined;
    try {
      loadConfigFromFile(path);
    } catch (e) {
      err = e as ConfigLoadError;
    }
    expect(err).toBeInstanceOf(ConfigLoadError);
    expect(err!.message).toBe(`open ${path}: no such file or directory`);
    expect(err!.line()).toBe(
      `open ${path}: no such file or directory (fix: check the --config path: it must name a readable file)`,
    );
    expect(err!.line()).not.toContain("\n");
  });

  it("bad YAML: the line that does not parse, on one line", () => {
    const path = join(dir, "bad.yaml");
    writeFileSync(path, `${head}profiles:\n- schedulerName: a\n   plugins: {}\n`);
    let err: ConfigLoadError | undefined;
    try {
      loadConfigFromFile(path);
    } catch (e) {
      err = e as ConfigLoadError;
    }
    expect(err!.message).toMatch(/^error converting YAML to JSON: yaml: line 4: /);
    expect(err!.line()).not.toContain("\n");
    expect(err!.line()).toContain("fix: the file is not valid YAML");
  });

  it("a null list element is the zero struct, as Go decodes it", () => {
    const cfg = loadConfig(
      `${head}profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled: [null]\n`,
    );
    expect(cfg.profiles[0]!.plugins.score).toEqual({ enabled: [{}] });
  });

  it("JSON is read too", () => {
    const cfg = loadConfig(
      JSON.stringify({
        apiVersion: "kubescheduler.config.k8s.io/v1",
        kind: "KubeSchedulerConfiguration",
        parallelism: 4,
      }),
    );
    expect(cfg.parallelism).toBe(4);
  });

  it("durations are Go duration strings", () => {
    const cfg = loadConfig(
      `${head}leaderElection:\n  leaseDuration: 1m30s\n  renewDeadline: 500ms\n  retryPeriod: 1.5s\n`,
    );
    expect(cfg.leaderElection).toMatchObject({
      leaseDurationMs: 90_000,
      renewDeadlineMs: 500,
      retryPeriodMs: 1_500,
    });
    expect(loadError(`${head}leaderElection:\n  leaseDuration: "15"\n`).message).toBe(
      'time: missing unit in duration "15"',
    );
    // Unquoted, 15 is a YAML number: metav1.Duration only unmarshals a string.
    expect(loadError(`${head}leaderElection:\n  leaseDuration: 15\n`).message).toBe(
      "json: cannot unmarshal number into Go value of type string",
    );
    expect(loadError(`${head}leaderElection:\n  retryPeriod: 2x\n`).message).toBe(
      'time: unknown unit "x" in duration "2x"',
    );
    expect(loadError(`${head}leaderElection:\n  retryPeriod: soon\n`).message).toBe(
      'time: invalid duration "soon"',
    );
  });
});

describe("decoding as upstream's strict decoder", () => {
  it("v1beta3 is not registered in 1.32", () => {
    const e = loadError(
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
    );
    expect(e.message).toBe(
      'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3" in scheme "pkg/scheduler/apis/config/scheme/scheme.go:30"',
    );
    expect(e.fix).toContain("kubescheduler.config.k8s.io/v1");
  });

  it("a wrong kind or group is not registered either", () => {
    expect(
      loadError("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n").message,
    ).toBe(
      'no kind "KubeProxyConfiguration" is registered for version "kubescheduler.config.k8s.io/v1" in scheme "pkg/scheduler/apis/config/scheme/scheme.go:30"',
    );
    expect(loadError("apiVersion: v1\nkind: KubeSchedulerConfiguration\n").message).toBe(
      'no kind "KubeSchedulerConfiguration" is registered for version "v1" in scheme "pkg/scheduler/apis/config/scheme/scheme.go:30"',
    );
  });

  it("a missing kind or apiVersion quotes the file", () => {
    expect(loadError("apiVersion: kubescheduler.config.k8s.io/v1\n").message).toBe(
      "Object 'Kind' is missing in 'apiVersion: kubescheduler.config.k8s.io/v1\n'",
    );
    expect(loadError("kind: KubeSchedulerConfiguration\n").message).toBe(
      "Object 'apiVersion' is missing in 'kind: KubeSchedulerConfiguration\n'",
    );
  });

  it("every unknown field is listed, with its path, plugin args included", () => {
    const e = loadError(
      `${head}percentageOfNodeToScore: 5\nprofiles:\n- schedulerName: a\n  plugin: {}\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        resourcess: []\n`,
    );
    expect(e.message).toBe(
      'strict decoding error: unknown field "percentageOfNodeToScore", unknown field "profiles[0].plugin", ' +
        "decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for plugin NodeResourcesFit: " +
        'strict decoding error: unknown field "scoringStrategy.resourcess"',
    );
  });

  it("a key given twice is a strict error too, listed before the unknown fields", () => {
    const e = loadError(`${head}parallelism: 4\nparallelism: 8\nbogus: 1\n`);
    expect(e.message).toBe(
      'strict decoding error: yaml: unmarshal errors:\n  line 4: key "parallelism" already set in map, unknown field "bogus"',
    );
    expect(e.line()).not.toContain("\n");
  });

  it("an out-of-tree plugin's args are not looked into", () => {
    const cfg = loadConfig(
      `${head}profiles:\n- pluginConfig:\n  - name: MyPlugin\n    args:\n      whatever: [1, 2]\n`,
    );
    expect(cfg.profiles[0]!.pluginConfig![0]).toEqual({ name: "MyPlugin", args: { whatever: [1, 2] } });
  });

  it("a wrong type: Go's UnmarshalTypeError text", () => {
    expect(loadError(`${head}parallelism: "16"\n`).message).toBe(
      "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of type int32",
    );
    expect(loadError(`${head}profiles:\n- schedulerName: 5\n`).message).toBe(
      "json: cannot unmarshal number 5 into Go struct field KubeSchedulerProfile.profiles.schedulerName of type string",
    );
    expect(loadError(`${head}parallelism: 3000000000\n`).message).toBe(
      "json: cannot unmarshal number 3000000000 into Go struct field KubeSchedulerConfiguration.parallelism of type int32",
    );
    // YAML 1.1, as sigs.k8s.io/yaml reads it: `off` is a boolean.
    expect(loadError(`${head}leaderElection:\n  leaderElect: off\n  resourceLock: 7\n`).message).toBe(
      "json: cannot unmarshal number 7 into Go struct field LeaderElectionConfiguration.leaderElection.resourceLock of type string",
    );
    expect(loadError(`${head}leaderElection: fast\n`).message).toBe(
      "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.leaderElection of type v1alpha1.LeaderElectionConfiguration",
    );
    expect(loadError(`${head}podMaxBackoffSeconds: 1.5\n`).message).toBe(
      "json: cannot unmarshal number 1.5 into Go struct field KubeSchedulerConfiguration.podMaxBackoffSeconds of type int64",
    );
  });
});
