import { describe, expect, it } from "vitest";
import {
  boolFlag,
  durationFlag,
  FlagError,
  type FlagSyntax,
  type Flags,
  flagUsages,
  intFlag,
  listFlag,
  parseFlags,
  stringFlag,
} from "./flag.ts";

const table = {
  name: stringFlag("a name", "default"),
  "data-dir": stringFlag("a directory"),
  port: intFlag("a port", 8080, { min: 0, max: 65535, hint: "use a port number from 0 to 65535" }),
  "watch-cache": boolFlag("a bool that is on", true),
  "in-memory": boolFlag("a bool that is off"),
  interval: durationFlag("a duration", 300_000, { min: 0, hint: "use a duration such as 5m0s" }),
  servers: listFlag("a list that appends", [], "append"),
  urls: listFlag("a list that replaces", ["http://localhost:2379"], "replace"),
  v: { ...intFlag("a level", 3, { min: 0, hint: "use a non-negative integer" }), shorthand: "v" },
} satisfies Flags;

const parse = (syntax: FlagSyntax, argv: string[]) => parseFlags({ name: "cmd", syntax, flags: table }, argv);

/** The values, or the error's message: what a test compares. */
function values(syntax: FlagSyntax, argv: string[]) {
  const r = parse(syntax, argv);
  return r instanceof FlagError ? r.message : r.values;
}

function error(syntax: FlagSyntax, argv: string[]): string {
  const r = parse(syntax, argv);
  return r instanceof FlagError ? r.message : `no error: ${JSON.stringify(r.values)}`;
}

describe("parseFlags, in both syntaxes", () => {
  for (const syntax of ["go", "pflag"] as const) {
    describe(syntax, () => {
      it("gives every flag its default when the command line is empty", () => {
        const r = parse(syntax, []);
        expect(r).toEqual({
          values: {
            name: "default",
            "data-dir": undefined,
            port: 8080,
            "watch-cache": true,
            "in-memory": false,
            interval: 300_000,
            servers: [],
            urls: ["http://localhost:2379"],
            v: 3,
          },
          given: new Set(),
          args: [],
          help: false,
        });
      });

      it("reads --flag=value and --flag value alike, and says which flags were given", () => {
        const r = parse(syntax, ["--name=n1", "--data-dir", "/tmp/x", "--port", "0", "--interval=1m30s"]);
        if (r instanceof FlagError) throw r;
        expect(r.values).toMatchObject({ name: "n1", "data-dir": "/tmp/x", port: 0, interval: 90_000 });
        expect([...r.given].sort()).toEqual(["data-dir", "interval", "name", "port"]);
        // An empty value is a value: `--name=` sets "".
        expect(values(syntax, ["--name="])).toMatchObject({ name: "" });
        // A value may start with a dash when it follows its flag.
        expect(values(syntax, ["--data-dir", "-x"])).toMatchObject({ "data-dir": "-x" });
      });

      it("takes bools without a separate value: --b, --b=false, and strconv.ParseBool's words", () => {
        expect(values(syntax, ["--in-memory"])).toMatchObject({ "in-memory": true });
        expect(values(syntax, ["--watch-cache=false"])).toMatchObject({ "watch-cache": false });
        expect(values(syntax, ["--watch-cache=0", "--in-memory=T"])).toMatchObject({
          "watch-cache": false,
          "in-memory": true,
        });
        // `--in-memory false`: the bool is true and "false" is an argument, in both libraries.
        const r = parse(syntax, ["--in-memory", "false"]);
        if (r instanceof FlagError) throw r;
        expect(r.values["in-memory"]).toBe(true);
        expect(r.args).toEqual(["false"]);
      });

      it("reads Go durations and decimal integers, refusing anything else with the flag's hint", () => {
        expect(values(syntax, ["--interval=0"])).toMatchObject({ interval: 0 });
        expect(values(syntax, ["--interval=1h"])).toMatchObject({ interval: 3_600_000 });
        expect(values(syntax, ["--interval=500ms"])).toMatchObject({ interval: 500 });
        expect(error(syntax, ["--interval=5 minutes"])).toContain("use a duration such as 5m0s");
        expect(error(syntax, ["--interval=-1s"])).toContain("use a duration such as 5m0s");
        expect(values(syntax, ["--port=+80"])).toMatchObject({ port: 80 });
        for (const bad of ["http", "1e3", "0x50", "", " 80", "65536", "-1", "8080.5"]) {
          expect(error(syntax, [`--port=${bad}`]), bad).toContain("use a port number from 0 to 65535");
        }
      });

      it("splits lists on commas; a repeated list appends or replaces, as its flag says", () => {
        expect(values(syntax, ["--servers=a,b", "--servers", "c", "--urls=x", "--urls=y,,z"])).toMatchObject({
          servers: ["a", "b", "c"],
          urls: ["y", "z"],
        });
        // The first appearance replaces the default: it is not appended to it.
        expect(values(syntax, ["--urls=x"])).toMatchObject({ urls: ["x"] });
        // A repeated scalar: the last one wins.
        expect(values(syntax, ["--port=1", "--port=2"])).toMatchObject({ port: 2 });
      });

      it("stops at --, keeping what follows as arguments", () => {
        const r = parse(syntax, ["--port=1", "--", "--port=2", "x"]);
        if (r instanceof FlagError) throw r;
        expect(r.values.port).toBe(1);
        expect(r.args).toEqual(["--port=2", "x"]);
      });

      it("asks for help on -h and --help, whatever follows", () => {
        for (const argv of [["-h"], ["--help"], ["--port=1", "--help", "--bogus"]]) {
          const r = parse(syntax, argv);
          expect(r instanceof FlagError ? r.message : r.help, argv.join(" ")).toBe(true);
        }
      });

      it("says a value is missing in the library's words", () => {
        expect(error(syntax, ["--name"])).toBe(
          syntax === "go" ? "cmd: flag needs an argument: -name" : "cmd: flag needs an argument: --name",
        );
      });

      it("refuses bad flag syntax", () => {
        expect(error(syntax, ["---name=x"])).toBe("cmd: bad flag syntax: ---name=x");
        expect(error(syntax, ["--=x"])).toBe("cmd: bad flag syntax: --=x");
      });
    });
  }
});

describe("Go's flag syntax (etcd)", () => {
  it("takes one dash as two", () => {
    expect(values("go", ["-name", "n1", "-port=1", "-in-memory"])).toMatchObject({
      name: "n1",
      port: 1,
      "in-memory": true,
    });
  });

  it("ends the flags at the first argument that is not one", () => {
    const r = parse("go", ["--port=1", "serve", "--port=2"]);
    if (r instanceof FlagError) throw r;
    expect(r.values.port).toBe(1);
    expect(r.args).toEqual(["serve", "--port=2"]);
    // A lone dash is an argument, not a flag.
    expect(parse("go", ["-"])).toMatchObject({ args: ["-"] });
  });

  it("words its errors as Go's flag package, pointing to --help for a flag it does not know", () => {
    expect(error("go", ["--initial-cluster=x"])).toBe(
      "cmd: flag provided but not defined: -initial-cluster (see cmd --help)",
    );
    expect(error("go", ["-initial-cluster", "x"])).toBe(
      "cmd: flag provided but not defined: -initial-cluster (see cmd --help)",
    );
    expect(error("go", ["--in-memory=yes"])).toBe(
      'cmd: invalid boolean value "yes" for -in-memory: use --in-memory or --in-memory=false',
    );
    expect(error("go", ["--port", "http"])).toBe(
      'cmd: invalid value "http" for flag -port: use a port number from 0 to 65535',
    );
    // Go's flag has no normalizer and no shorthands.
    expect(error("go", ["--data_dir=x"])).toBe(
      "cmd: flag provided but not defined: -data_dir (see cmd --help)",
    );
  });

  it("names the flag -v, not a shorthand: -v is the flag v", () => {
    expect(values("go", ["-v", "5"])).toMatchObject({ v: 5 });
    expect(values("go", ["-v=5"])).toMatchObject({ v: 5 });
    expect(error("go", ["-v5"])).toBe("cmd: flag provided but not defined: -v5 (see cmd --help)");
  });
});

describe("pflag's syntax (Kubernetes components)", () => {
  it("reads shorthands: -v 3, -v3, -v=3", () => {
    for (const argv of [["-v", "5"], ["-v5"], ["-v=5"], ["--v=5"], ["--v", "5"]]) {
      expect(values("pflag", argv), argv.join(" ")).toMatchObject({ v: 5 });
    }
  });

  it("sets arguments aside and reads the flags after them", () => {
    const r = parse("pflag", ["serve", "--port=2", "", "x"]);
    if (r instanceof FlagError) throw r;
    expect(r.values.port).toBe(2);
    expect(r.args).toEqual(["serve", "", "x"]);
  });

  it("reads underscores as dashes, as component-base's WordSepNormalizeFunc", () => {
    expect(values("pflag", ["--data_dir=/x", "--watch_cache=false"])).toMatchObject({
      "data-dir": "/x",
      "watch-cache": false,
    });
  });

  it("words its errors as pflag, pointing to --help for a flag it does not know", () => {
    expect(error("pflag", ["--secure-port=6443"])).toBe("cmd: unknown flag: --secure-port (see cmd --help)");
    // One dash means shorthands: a long name with one dash is not that flag.
    expect(error("pflag", ["-port=1"])).toBe("cmd: unknown shorthand flag: 'p' in -port=1 (see cmd --help)");
    expect(error("pflag", ["-v"])).toBe("cmd: flag needs an argument: 'v' in -v");
    expect(error("pflag", ["--port=http"])).toBe(
      'cmd: invalid argument "http" for "--port" flag: use a port number from 0 to 65535',
    );
    expect(error("pflag", ["-v", "x"])).toBe(
      'cmd: invalid argument "x" for "-v, --v" flag: use a non-negative integer',
    );
    expect(error("pflag", ["--watch-cache=yes"])).toBe(
      'cmd: invalid argument "yes" for "--watch-cache" flag: use --watch-cache or --watch-cache=false',
    );
    // The name as written, before the normalizer.
    expect(error("pflag", ["--secure_port"])).toBe("cmd: unknown flag: --secure_port (see cmd --help)");
  });
});

describe("flagUsages", () => {
  it("lists every flag with its help and its default, aligned", () => {
    const lines = flagUsages({ name: "cmd", syntax: "pflag", flags: table }, { help: "show this help" });
    expect(lines).toContain('      --name         a name (default "default")');
    expect(lines).toContain("      --data-dir     a directory");
    expect(lines).toContain("      --interval     a duration (default 5m0s)");
    expect(lines).toContain("      --watch-cache  a bool that is on (default true)");
    expect(lines).toContain("      --in-memory    a bool that is off");
    expect(lines).toContain("      --urls         a list that replaces (default http://localhost:2379)");
    expect(lines).toContain("  -v, --v            a level (default 3)");
    expect(lines.at(-1)).toBe("  -h, --help         show this help");
    const go = flagUsages({ name: "cmd", syntax: "go", flags: table }, { help: "show this help" });
    expect(go[0]).toBe('  --name         a name (default "default")');
    expect(go.at(-1)).toBe("  --help         show this help");
  });
});
