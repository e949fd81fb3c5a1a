/**
 * `npm run cluster`'s command line: the defaults, `--ha` as a bool or a count, and every
 * combination the cluster cannot run refused in one line that says the fix; an unknown
 * subcommand lists the known ones.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FlagError } from "../cli/flag.ts";
import { main } from "../cluster.ts";
import { parseDirFlags, parseStartFlags, repoRoot, type StartOptions } from "./flags.ts";
import { run as start } from "./start.ts";

const options = (argv: string[]): StartOptions => {
  const p = parseStartFlags(argv);
  if (p instanceof FlagError || "usage" in p) throw new Error(`expected options, got ${JSON.stringify(p)}`);
  return p.options;
};
const error = (argv: string[]): string => {
  const p = parseStartFlags(argv);
  if (!(p instanceof FlagError)) throw new Error(`expected an error, got ${JSON.stringify(p)}`);
  return p.message;
};

describe("cluster start flags", () => {
  it("default to one node of ours, no HA, in .cluster/ at the repository root", () => {
    expect(options([])).toEqual({
      dir: join(repoRoot, ".cluster"),
      nodes: 1,
      fakeNodes: 0,
      etcd: "ours",
      etcdMembers: 1,
      ha: 1,
      viewPort: 8090,
      tracing: true,
    });
  });

  it("trace every component by default; --tracing=false turns it off", () => {
    expect(options(["--tracing=false"]).tracing).toBe(false);
    expect(options(["--tracing"]).tracing).toBe(true);
  });

  it("read --ha alone as two of each, --ha=3 as three, --ha=false as one", () => {
    expect(options(["--ha", "--nodes", "3"])).toMatchObject({ ha: 2, nodes: 3 });
    expect(options(["--ha=3"]).ha).toBe(3);
    expect(options(["--ha=false"]).ha).toBe(1);
  });

  it("take --dir relative to the working directory, and the real etcd with three members", () => {
    expect(options(["--dir", "x/y", "--etcd=real", "--etcd-members=3", "--fake-nodes=10"])).toMatchObject({
      dir: join(process.cwd(), "x/y"),
      etcd: "real",
      etcdMembers: 3,
      fakeNodes: 10,
    });
  });

  it("refuse what cannot run, in one line with the fix", () => {
    expect(error(["--ha=5"])).toBe("cluster start: --ha=5: use --ha (2 of each) or --ha=3");
    expect(error(["--ha=maybe"])).toContain('invalid argument "maybe" for "--ha" flag');
    expect(error(["--etcd-members=3"])).toBe(
      "cluster start: --etcd-members=3: our etcd runs one member (no peer protocol); add --etcd=real",
    );
    expect(error(["--etcd=real", "--etcd-members=2"])).toContain("use an odd number (1 or 3)");
    expect(error(["--etcd=docker"])).toBe(
      "cluster start: --etcd=docker: use --etcd=ours (the course's) or --etcd=real (the etcd binary)",
    );
    expect(error(["--nodes=-1"])).toBe(
      'cluster start: invalid argument "-1" for "--nodes" flag: use a number of nodes from 0 to 50',
    );
    expect(error(["--nodes=0"])).toContain("no nodes: use --nodes 1 or more");
    expect(error(["--node=3"])).toBe("cluster start: unknown flag: --node (see cluster start --help)");
    expect(error(["three"])).toContain('unexpected argument "three"');
    for (const m of [error(["--ha=5"]), error(["--nodes=-1"])]) expect(m).not.toContain("\n");
  });

  it("run over a network address with --advertise-address (the API server binding there unless --bind-address says), refusing what it would not listen on", () => {
    expect(options(["--advertise-address=192.0.2.2"])).toMatchObject({ advertiseAddress: "192.0.2.2" });
    expect(options(["--advertise-address=192.0.2.2"]).bindAddress).toBeUndefined();
    expect(options(["--advertise-address=192.0.2.2", "--bind-address=0.0.0.0"])).toMatchObject({
      advertiseAddress: "192.0.2.2",
      bindAddress: "0.0.0.0",
    });
    expect(options(["--bind-address=0.0.0.0"])).toMatchObject({ bindAddress: "0.0.0.0" });
    expect(error(["--advertise-address=myhost"])).toBe(
      "cluster start: --advertise-address=myhost: use an IP address of this machine (e.g. its eth0's)",
    );
    expect(error(["--advertise-address=0.0.0.0"])).toContain(
      "clients dial it, so use one address of this machine; --bind-address=0.0.0.0 listens on every interface",
    );
    expect(error(["--bind-address=192.0.2.2"])).toBe(
      "cluster start: --bind-address=192.0.2.2: the kubeconfigs point at 127.0.0.1, where the API server would not listen; use --advertise-address=192.0.2.2, or --bind-address=0.0.0.0",
    );
    expect(error(["--bind-address=any"])).toContain("use an IP address (0.0.0.0: every interface)");
  });

  it("print the usage with --help, and take only --dir for the other subcommands", () => {
    const p = parseStartFlags(["--help"]);
    expect(p).toHaveProperty("usage");
    expect((p as { usage: string }).usage).toMatch(/--fake-nodes\s+hollow nodes/);
    expect((p as { usage: string }).usage).toMatch(/--advertise-address\s+the IP address of this machine/);
    expect((p as { usage: string }).usage).toMatch(
      /--bind-address\s+the IP address the API server listens on/,
    );
    expect(parseDirFlags("status", ["--nodes=3"])).toBeInstanceOf(FlagError);
    expect(parseDirFlags("stop", ["--dir=/tmp/c"])).toEqual({ options: { dir: "/tmp/c" } });
  });
});

describe("npm run cluster", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("exits 2 with the flag's one-line error before anything starts", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await start(["--etcd-members=3"], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      write: () => {},
      tty: false,
    });
    expect(code).toBe(2);
    expect(err).toEqual([
      "cluster start: --etcd-members=3: our etcd runs one member (no peer protocol); add --etcd=real",
    ]);
    expect(out).toEqual([]);
  });

  it("lists the known subcommands for an unknown one", async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((t) => {
      written.push(String(t));
      return true;
    });
    expect(await main(["statu"])).toBe(2);
    expect(written).toEqual([
      'cluster: unknown subcommand "statu": use one of start, status, stop, down, chaos, trace (no subcommand: start)\n',
    ]);
  });
});
