import { describe, expect, it } from "vitest";
import type { PodSpec } from "../../../code/apiserver/admission/podsecurity/checks.ts";
import { runAsNonRoot } from "./run-as-non-root.ts";

const c = (name: string, runAsNonRoot?: boolean) => ({
  name,
  ...(runAsNonRoot === undefined ? {} : { securityContext: { runAsNonRoot } }),
});

function verdict(spec: PodSpec): string {
  const r = runAsNonRoot({}, spec);
  return r.allowed ? "allowed" : `${r.forbiddenReason} (${r.forbiddenDetail})`;
}

describe("runAsNonRoot", () => {
  it("allows a pod whose containers all set true", () => {
    expect(verdict({ containers: [c("a", true), c("b", true)] })).toBe("allowed");
  });

  it("allows containers that set nothing when the pod sets true", () => {
    expect(verdict({ securityContext: { runAsNonRoot: true }, containers: [c("a"), c("b")] })).toBe(
      "allowed",
    );
  });

  it("asks the pod or the containers that set nothing to set true", () => {
    expect(verdict({ containers: [c("a"), c("b", true)] })).toBe(
      'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)',
    );
    expect(verdict({ containers: [c("a"), c("b")] })).toBe(
      'runAsNonRoot != true (pod or containers "a", "b" must set securityContext.runAsNonRoot=true)',
    );
  });

  it("a pod's true does not cover a container's explicit false", () => {
    expect(verdict({ securityContext: { runAsNonRoot: true }, containers: [c("a"), c("root", false)] })).toBe(
      'runAsNonRoot != true (container "root" must not set securityContext.runAsNonRoot=false)',
    );
  });

  it("explicit faults come first, and alone", () => {
    expect(verdict({ securityContext: { runAsNonRoot: false }, containers: [c("a", false), c("b")] })).toBe(
      'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)',
    );
    expect(verdict({ securityContext: { runAsNonRoot: false }, containers: [c("a", true)] })).toBe(
      "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)",
    );
  });

  it("judges init and ephemeral containers too, in order", () => {
    expect(
      verdict({
        initContainers: [c("init")],
        containers: [c("main", true)],
        ephemeralContainers: [c("debug")],
      }),
    ).toBe(
      'runAsNonRoot != true (pod or containers "init", "debug" must set securityContext.runAsNonRoot=true)',
    );
  });
});
