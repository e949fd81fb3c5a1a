import { describe, expect, it } from "vitest";
import { defaultConfiguration } from "./defaults.ts";
import { parseThresholdConfig, toNodeStatusThresholds } from "./eviction.ts";
import { checkTaintValidation, parseTaints } from "./taints.ts";
import { aggregate, validateKubeletConfiguration } from "./validation.ts";

describe("validateKubeletConfiguration", () => {
  it("accepts the defaults", () => {
    expect(validateKubeletConfiguration(defaultConfiguration())).toEqual([]);
  });

  it("chapter 8: checks the tracing field as component-base's ValidateTracingConfiguration", () => {
    const c = {
      ...defaultConfiguration(),
      tracing: { endpoint: "unix:///otel.sock", samplingRatePerMillion: 2_000_000 },
    };
    expect(validateKubeletConfiguration(c)).toEqual([
      "invalid configuration: tracing.samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million",
      'invalid configuration: tracing.endpoint: Invalid value: "unix:///otel.sock": unsupported scheme: unix. Options are http and https (OTLP/HTTP)',
    ]);
  });

  it("reports every problem with upstream's message, in upstream's order", () => {
    const c = {
      ...defaultConfiguration(),
      nodeLeaseDurationSeconds: 0,
      healthzPort: 70000,
      nodeStatusMaxImages: -2,
      maxPods: -1,
      port: 0,
      readOnlyPort: 65536,
      containerRuntimeEndpoint: "",
    };
    expect(validateKubeletConfiguration(c)).toEqual([
      "invalid configuration: nodeLeaseDurationSeconds must be greater than 0",
      "invalid configuration: healthzPort (--healthz-port) 70000 must be between 1 and 65535, inclusive",
      "invalid configuration: nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or greater",
      "invalid configuration: maxPods (--max-pods) -1 must not be a negative number",
      "invalid configuration: port (--port) 0 must be between 1 and 65535, inclusive",
      "invalid configuration: readOnlyPort (--read-only-port) 65536 must be between 0 and 65535, inclusive",
      "invalid configuration: the containerRuntimeEndpoint was not specified or empty",
    ]);
  });

  it("checks taints written in a file as the flag's parser would", () => {
    const c = {
      ...defaultConfiguration(),
      registerWithTaints: [
        { key: "bad key", effect: "NoSchedule" as const },
        { key: "ok", effect: "Sometimes" as never },
      ],
    };
    const errs = validateKubeletConfiguration(c);
    expect(errs).toHaveLength(2);
    expect(errs[0]).toMatch(
      /^invalid taint: \{bad key {2}NoSchedule <nil>\} \(invalid taint key: name part must consist of/,
    );
    expect(errs[1]).toBe(
      "invalid taint: {ok  Sometimes <nil>} (invalid taint effect: Sometimes, unsupported taint effect)",
    );
  });

  it("aggregates as utilerrors does", () => {
    expect(aggregate(["a"])).toBe("a");
    expect(aggregate(["a", "b"])).toBe("[a, b]");
  });
});

describe("parseTaints (--register-with-taints)", () => {
  it("reads key=value:Effect and key:Effect", () => {
    expect(parseTaints(["dedicated=gpu:NoSchedule", "spot:PreferNoSchedule"])).toEqual([
      { key: "dedicated", value: "gpu", effect: "NoSchedule" },
      { key: "spot", effect: "PreferNoSchedule" },
    ]);
  });

  it("refuses what upstream refuses, with its words", () => {
    // No effect: `dedicated` is a key for removal only; `dedicated=gpu` is read as one (bad) key.
    expect(parseTaints(["dedicated"])).toBe("invalid taint spec: dedicated");
    expect(parseTaints(["dedicated=gpu"])).toMatch(
      /^invalid taint spec: dedicated=gpu, name part must consist of/,
    );
    expect(parseTaints(["a=b:Never"])).toBe("invalid taint effect: Never, unsupported taint effect");
    expect(parseTaints(["a=b=c:NoSchedule"])).toBe("invalid taint spec: a=b=c:NoSchedule");
    expect(parseTaints(["a:b:NoSchedule"])).toBe("invalid taint spec: a:b:NoSchedule");
    expect(parseTaints(["a=b c:NoSchedule"])).toMatch(
      /^invalid taint spec: a=b c:NoSchedule, a valid label must be/,
    );
    expect(parseTaints(["-a:NoSchedule"])).toMatch(
      /^invalid taint spec: -a:NoSchedule, name part must consist of/,
    );
    expect(parseTaints(["a=1:NoSchedule", "a=2:NoSchedule"])).toBe(
      "duplicated taints with the same key and effect: {a 2 NoSchedule <nil>}",
    );
    // One key with two effects is two taints.
    expect(parseTaints(["a:NoSchedule", "a:NoExecute"])).toHaveLength(2);
  });

  it("checkTaintValidation accepts a good taint", () => {
    expect(checkTaintValidation({ key: "example.com/a", value: "b", effect: "NoExecute" })).toBeUndefined();
  });
});

describe("parseThresholdConfig (--eviction-hard)", () => {
  it("reads quantities and percentages; drops 0% and 100%", () => {
    expect(
      parseThresholdConfig({
        "memory.available": "1Gi",
        "nodefs.available": "10%",
        "imagefs.available": "0%",
      }),
    ).toEqual([
      { signal: "memory.available", quantity: "1Gi" },
      { signal: "nodefs.available", percentage: 0.1 },
    ]);
  });

  it("refuses unknown signals and impossible values", () => {
    expect(parseThresholdConfig({ "memory.availabe": "1Gi" })).toBe(
      "unsupported eviction signal memory.availabe",
    );
    expect(parseThresholdConfig({ "memory.available": "0" })).toBe(
      "eviction threshold memory.available must be positive: 0",
    );
    expect(parseThresholdConfig({ "memory.available": "-1Mi" })).toBe(
      "eviction threshold memory.available must be positive: -1Mi",
    );
    expect(parseThresholdConfig({ "nodefs.available": "-5%" })).toBe(
      "eviction percentage threshold nodefs.available must be >= 0%: -5%",
    );
    expect(parseThresholdConfig({ "nodefs.available": "150%" })).toBe(
      "eviction percentage threshold nodefs.available must be <= 100%: 150%",
    );
    expect(parseThresholdConfig({ "nodefs.available": "ten%" })).toBe(
      'strconv.ParseFloat: parsing "ten": invalid syntax',
    );
    expect(parseThresholdConfig({ "memory.available": "lots" })).toMatch(
      /^quantities must match the regular expression/,
    );
  });

  it("keeps, for the node status, only the signals its type carries", () => {
    const t = parseThresholdConfig({
      "memory.available": "100Mi",
      "pid.available": "10%",
      "imagefs.inodesFree": "5%",
    });
    expect(toNodeStatusThresholds(t as never)).toEqual([{ signal: "memory.available", quantity: "100Mi" }]);
  });
});
