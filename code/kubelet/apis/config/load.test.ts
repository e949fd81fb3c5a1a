import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DefaultEvictionHard,
  defaultConfiguration,
  legacyDefaultConfiguration,
  setDefaults,
} from "./defaults.ts";
import { KubeletConfigLoadError, loadKubeletConfig, loadKubeletConfigFile, parseGoDuration } from "./load.ts";

const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
const dir = mkdtempSync(join(tmpdir(), "kubelet-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function loadError(data: string): KubeletConfigLoadError {
  try {
    loadKubeletConfig(data);
  } catch (e) {
    if (e instanceof KubeletConfigLoadError) return e;
    throw e;
  }
  throw new Error("the configuration loaded");
}

describe("SetDefaults_KubeletConfiguration", () => {
  it("gives an empty file upstream's v1beta1 defaults", () => {
    const c = defaultConfiguration();
    expect(c).toMatchObject({
      syncFrequencyMs: 60_000,
      fileCheckFrequencyMs: 20_000,
      nodeStatusUpdateFrequencyMs: 10_000,
      nodeStatusReportFrequencyMs: 300_000,
      nodeLeaseDurationSeconds: 40,
      nodeStatusMaxImages: 50,
      maxPods: 110,
      address: "0.0.0.0",
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort: 10248,
      registerNode: true,
      registerWithTaints: [],
      authorization: { mode: "Webhook" },
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true, cacheTTLMs: 120_000 } },
      containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    });
    expect(c.evictionHard).toEqual(DefaultEvictionHard);
  });

  it("keeps the pre-file defaults for a kubelet started with flags only (applyLegacyDefaults)", () => {
    const c = legacyDefaultConfiguration();
    expect(c.authorization.mode).toBe("AlwaysAllow");
    expect(c.authentication.anonymous.enabled).toBe(true);
    expect(c.authentication.webhook.enabled).toBe(false);
    expect(c.readOnlyPort).toBe(10255);
    // Everything else is the file's default.
    expect({ ...c, authorization: 0, authentication: 0, readOnlyPort: 0 }).toEqual({
      ...defaultConfiguration(),
      authorization: 0,
      authentication: 0,
      readOnlyPort: 0,
    });
  });

  it("makes the report frequency follow an update frequency given alone", () => {
    expect(setDefaults({ nodeStatusUpdateFrequencyMs: 4000 })).toMatchObject({
      nodeStatusUpdateFrequencyMs: 4000,
      nodeStatusReportFrequencyMs: 4000,
    });
    expect(
      setDefaults({ nodeStatusUpdateFrequencyMs: 4000, nodeStatusReportFrequencyMs: 60_000 }),
    ).toMatchObject({
      nodeStatusReportFrequencyMs: 60_000,
    });
    expect(setDefaults({ nodeStatusReportFrequencyMs: 60_000 })).toMatchObject({
      nodeStatusUpdateFrequencyMs: 10_000,
      nodeStatusReportFrequencyMs: 60_000,
    });
  });

  it("reads Go's zero value as unset, except in upstream's pointer fields", () => {
    const c = setDefaults({
      port: 0,
      maxPods: 0,
      syncFrequencyMs: 0,
      address: "",
      healthzPort: 0,
      registerNode: false,
    });
    expect(c).toMatchObject({ port: 10250, maxPods: 110, syncFrequencyMs: 60_000, address: "0.0.0.0" });
    expect(c.healthzPort).toBe(0); // *int32: an explicit 0 disables /healthz
    expect(c.registerNode).toBe(false);
  });

  it("returns fresh objects: changing one configuration leaves the defaults alone", () => {
    defaultConfiguration().evictionHard["memory.available"] = "1Gi";
    expect(defaultConfiguration().evictionHard["memory.available"]).toBe("100Mi");
  });
});

describe("loading a KubeletConfiguration file", () => {
  it("decodes the fields, durations to milliseconds, then defaults the rest", () => {
    const { config, warnings } = loadKubeletConfig(
      `${head}syncFrequency: 30s\nnodeStatusUpdateFrequency: 2s\nnodeLeaseDurationSeconds: 8\nport: 11250\n` +
        "registerWithTaints:\n- key: dedicated\n  value: gpu\n  effect: NoSchedule\n" +
        "kubeReserved:\n  cpu: 200m\nevictionHard:\n  memory.available: 1Gi\n" +
        "authentication:\n  x509:\n    clientCAFile: /pki/ca.crt\nauthorization:\n  mode: AlwaysAllow\n",
    );
    expect(warnings).toEqual([]);
    expect(config).toMatchObject({
      syncFrequencyMs: 30_000,
      nodeStatusUpdateFrequencyMs: 2000,
      nodeStatusReportFrequencyMs: 2000,
      nodeLeaseDurationSeconds: 8,
      port: 11250,
      registerWithTaints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }],
      kubeReserved: { cpu: "200m" },
      authentication: { x509: { clientCAFile: "/pki/ca.crt" }, anonymous: { enabled: false } },
      authorization: { mode: "AlwaysAllow" },
      maxPods: 110,
    });
    // A file's evictionHard replaces the defaults whole.
    expect(config.evictionHard).toEqual({ "memory.available": "1Gi" });
  });

  it("reads JSON too", () => {
    const { config } = loadKubeletConfig(
      JSON.stringify({
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        maxPods: 20,
      }),
    );
    expect(config.maxPods).toBe(20);
  });

  it("decodes unknown fields leniently and says so, as upstream's v1beta1 decoder does", () => {
    const { config, warnings } = loadKubeletConfig(
      `${head}maxPods: 12\nmaxPod: 3\nauthentication:\n  x509:\n    caFile: x\n`,
    );
    expect(config.maxPods).toBe(12);
    expect(warnings).toEqual([
      'Using lenient decoding as strict decoding failed: strict decoding error: unknown field "maxPod", unknown field "authentication.x509.caFile"',
    ]);
  });

  it("lists the v1beta1 fields it reads but does not use", () => {
    const { warnings } = loadKubeletConfig(`${head}cgroupDriver: systemd\nclusterDNS: [10.96.0.10]\n`);
    expect(warnings).toEqual([
      "kubelet.config.k8s.io/v1beta1 fields this course's kubelet does not use, ignored: cgroupDriver, clusterDNS",
    ]);
  });

  it("refuses a wrong type with Go's decoder message", () => {
    expect(loadError(`${head}maxPods: many\n`).message).toBe(
      "failed to decode: json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32",
    );
    expect(loadError(`${head}registerNode: "yes please"\n`).message).toContain(
      "Go struct field KubeletConfiguration.registerNode of type bool",
    );
    expect(loadError(`${head}kubeReserved:\n  cpu: 2\n`).message).toBe(
      "failed to decode: json: cannot unmarshal number 2 into Go struct field KubeletConfiguration.kubeReserved.cpu of type string",
    );
    expect(loadError(`${head}authentication:\n  webhook:\n    enabled: 1\n`).message).toContain(
      "into Go struct field KubeletWebhookAuthentication.enabled of type bool",
    );
  });

  it("refuses a duration without its unit, with time.ParseDuration's words", () => {
    const e = loadError(`${head}syncFrequency: "10"\n`);
    expect(e.message).toBe('failed to decode: time: missing unit in duration "10"');
    expect(e.line()).toContain("(fix: write durations with a unit");
  });

  it("refuses another kind or version, and a file without them", () => {
    expect(loadError("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n").message).toBe(
      'failed to decode: no kind "KubeletConfiguration" is registered for version "kubelet.config.k8s.io/v1" in scheme "pkg/kubelet/apis/config/scheme/scheme.go"',
    );
    expect(loadError("maxPods: 3\n").message).toMatch(/^failed to decode: Object 'Kind' is missing in/);
    expect(loadError("kind: KubeletConfiguration\n").message).toMatch(/Object 'apiVersion' is missing/);
    expect(loadError("- a\n- b\n").fix).toContain("apiVersion: kubelet.config.k8s.io/v1beta1");
  });

  it("refuses YAML that does not parse, naming the line", () => {
    expect(loadError(`${head}maxPods: [1\n`).message).toMatch(
      /^failed to decode: error converting YAML to JSON: yaml: line \d+: /,
    );
  });

  it("says which file it could not read, and refuses an empty one", () => {
    const missing = join(dir, "missing.yaml");
    expect(() => loadKubeletConfigFile(missing)).toThrow(
      `failed to read kubelet config file "${missing}", error: open ${missing}: no such file or directory`,
    );
    const empty = join(dir, "empty.yaml");
    writeFileSync(empty, "");
    expect(() => loadKubeletConfigFile(empty)).toThrow(`kubelet config file "${empty}" was empty`);
    const ok = join(dir, "ok.yaml");
    writeFileSync(ok, `${head}maxPods: 7\n`);
    expect(loadKubeletConfigFile(ok).config.maxPods).toBe(7);
  });
});

describe("parseGoDuration", () => {
  it("reads Go durations and refuses what Go refuses", () => {
    expect(parseGoDuration("1m30s")).toBe(90_000);
    expect(parseGoDuration("250ms")).toBe(250);
    expect(parseGoDuration("0")).toBe(0);
    expect((parseGoDuration("5x") as Error).message).toBe('time: unknown unit "x" in duration "5x"');
    expect((parseGoDuration("soon") as Error).message).toBe('time: invalid duration "soon"');
  });
});

describe("chapter 8: the tracing field", () => {
  it("is read as component-base's TracingConfiguration, and stays absent when not written", () => {
    const { config, warnings } = loadKubeletConfig(
      `${head}tracing:\n  endpoint: 127.0.0.1:4318\n  samplingRatePerMillion: 1000000\n`,
    );
    expect(config.tracing).toEqual({ endpoint: "127.0.0.1:4318", samplingRatePerMillion: 1000000 });
    expect(warnings).toEqual([]);
    expect(loadKubeletConfig(head).config.tracing).toBeUndefined();
    expect(loadError(`${head}tracing:\n  samplingRatePerMillion: "all"\n`).message).toContain(
      "cannot unmarshal string into Go struct field TracingConfiguration.samplingRatePerMillion of type int32",
    );
  });
});
