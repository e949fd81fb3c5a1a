import { describe, expect, it } from "vitest";
import { FlagError, parseAPIServerFlags } from "./kube-apiserver.ts";

const admissionOf = (argv: string[]) => {
  const parsed = parseAPIServerFlags(argv);
  if (parsed instanceof FlagError || !("run" in parsed)) throw new Error(`not a run: ${String(parsed)}`);
  return parsed.run.admission;
};

describe("kube-apiserver's admission flags", () => {
  it("leave admission off when none is given, as chapters 1–2 start", () => {
    expect(admissionOf([])).toBeUndefined();
    expect(admissionOf(["--insecure-port=0"])).toBeUndefined();
  });

  it("turn the chain on when any is given, with the toleration seconds", () => {
    expect(admissionOf(["--enable-admission-plugins=AlwaysDeny,NodeRestriction"])).toEqual({
      enablePlugins: ["AlwaysDeny", "NodeRestriction"],
      disablePlugins: [],
      defaultNotReadyTolerationSeconds: 300,
      defaultUnreachableTolerationSeconds: 300,
    });
    expect(
      admissionOf([
        "--disable-admission-plugins=ResourceQuota",
        "--default-unreachable-toleration-seconds=60",
      ]),
    ).toEqual({
      enablePlugins: [],
      disablePlugins: ["ResourceQuota"],
      defaultNotReadyTolerationSeconds: 300,
      defaultUnreachableTolerationSeconds: 60,
    });
    // An empty value still says "admission, with the defaults".
    expect(admissionOf(["--enable-admission-plugins="])?.enablePlugins).toEqual([]);
  });

  it("refuse an unknown plugin and one both enabled and disabled", () => {
    expect(String(parseAPIServerFlags(["--enable-admission-plugins=Nope"]))).toBe(
      'FlagError: kube-apiserver: enable-admission-plugins plugin "Nope" is unknown',
    );
    expect(
      String(
        parseAPIServerFlags(["--enable-admission-plugins=Priority", "--disable-admission-plugins=Priority"]),
      ),
    ).toBe(
      "FlagError: kube-apiserver: [Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
    );
  });
});
