import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportURL, readTracingConfiguration, tracingFromObject } from "./config.ts";

describe("TracingConfiguration", () => {
  it("reads the API server's file kind", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tracing-config-"));
    const file = join(dir, "t.yaml");
    await writeFile(
      file,
      "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4318\nsamplingRatePerMillion: 1000000\n",
    );
    expect(readTracingConfiguration(file)).toEqual({
      endpoint: "127.0.0.1:4318",
      samplingRatePerMillion: 1000000,
    });
    await writeFile(file, "apiVersion: v1\nkind: ConfigMap\n");
    expect(() => readTracingConfiguration(file)).toThrow(
      /no kind "ConfigMap" is registered for version "v1"/,
    );
    await rm(dir, { recursive: true });
    expect(() => readTracingConfiguration(file)).toThrow(/unable to read tracing configuration from/);
  });

  it("refuses rates outside 0..1000000 with upstream's messages", () => {
    expect(() => tracingFromObject({ samplingRatePerMillion: -1 })).toThrow(
      "tracing.samplingRatePerMillion: Invalid value: -1: sampling rate must be positive",
    );
    expect(() => tracingFromObject({ samplingRatePerMillion: 1000001 })).toThrow(
      "sampling rate per million must be less than or equal to one million",
    );
  });

  it("sends to OTLP/HTTP's /v1/traces", () => {
    expect(exportURL()).toBe("http://localhost:4318/v1/traces");
    expect(exportURL("127.0.0.1:5000")).toBe("http://127.0.0.1:5000/v1/traces");
    expect(exportURL("https://c.example/otlp/v1/traces")).toBe("https://c.example/otlp/v1/traces");
    expect(() => exportURL("unix:///run/otel.sock")).toThrow(/unsupported scheme: unix/);
  });
});
