import { describe, expect, it } from "vitest";
import {
  type ControllerDescriptor,
  isControllerEnabled,
  knownControllers,
  newControllerDescriptors,
  resolveControllers,
} from "./controller-manager.ts";

const none = new Set<string>();

describe("--controllers (IsControllerEnabled)", () => {
  it("* enables every controller not disabled by default", () => {
    expect(isControllerEnabled("namespace-controller", none, ["*"])).toBe(true);
    expect(
      isControllerEnabled("bootstrap-signer-controller", new Set(["bootstrap-signer-controller"]), ["*"]),
    ).toBe(false);
  });

  it("a name enables, -name disables, and the first entry naming a controller wins", () => {
    expect(isControllerEnabled("namespace-controller", none, ["*", "-namespace-controller"])).toBe(false);
    expect(isControllerEnabled("namespace-controller", none, ["-namespace-controller", "*"])).toBe(false);
    expect(
      isControllerEnabled("namespace-controller", none, ["namespace-controller", "-namespace-controller"]),
    ).toBe(true);
    const off = new Set(["bootstrap-signer-controller"]);
    expect(
      isControllerEnabled("bootstrap-signer-controller", off, ["*", "bootstrap-signer-controller"]),
    ).toBe(true);
  });

  it("without * only the named controllers run", () => {
    expect(isControllerEnabled("namespace-controller", none, ["serviceaccount-controller"])).toBe(false);
    expect(isControllerEnabled("serviceaccount-controller", none, ["serviceaccount-controller"])).toBe(true);
    expect(isControllerEnabled("serviceaccount-controller", none, [])).toBe(false);
  });
});

describe("resolveControllers", () => {
  it("turns aliases into canonical names, keeping * and the minus", () => {
    expect(resolveControllers(["*", "-namespace", "serviceaccount-controller"])).toEqual([
      "*",
      "-namespace-controller",
      "serviceaccount-controller",
    ]);
  });

  it("an unknown name is one line with upstream's words and the known names", () => {
    const err = resolveControllers(["*", "-namespaces", "bogus"]);
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).not.toContain("\n");
    expect(msg).toContain('"namespaces" is not in the list of known controllers');
    expect(msg).toContain('"bogus" is not in the list of known controllers');
    expect(msg).toContain(`known: ${knownControllers().join(", ")}`);
  });

  it("with a controller disabled by default, * leaves it off", () => {
    const descriptors = newControllerDescriptors();
    const extra: ControllerDescriptor = {
      name: "token-cleaner-controller",
      aliases: ["tokencleaner"],
      disabledByDefault: true,
      clientName: "token-cleaner",
      start: async () => ({ done: Promise.resolve() }),
    };
    descriptors.set(extra.name, extra);
    const resolved = resolveControllers(["*", "tokencleaner"], descriptors) as string[];
    expect(resolved).toEqual(["*", "token-cleaner-controller"]);
    expect(isControllerEnabled(extra.name, new Set([extra.name]), ["*"])).toBe(false);
    expect(isControllerEnabled(extra.name, new Set([extra.name]), resolved)).toBe(true);
  });

  it("knows the controllers it registers", () => {
    expect(knownControllers()).toEqual([
      "deployment-controller",
      "disruption-controller", // chapter 5
      "endpoints-controller", // chapter 7
      "endpointslice-controller",
      "garbage-collector-controller",
      "namespace-controller",
      "node-lifecycle-controller", // chapter 7
      "replicaset-controller",
      "resourcequota-controller",
      "serviceaccount-controller",
      "taint-eviction-controller", // chapter 7
    ]);
  });
});
