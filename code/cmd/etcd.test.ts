import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Etcd3 } from "etcd3";
import { describe, expect, it } from "vitest";
import { FlagError, main, parseEtcdFlags } from "./etcd.ts";
import { startCommand, waitFor } from "./testing/command-process.ts";

describe("parseEtcdFlags", () => {
  it("gives etcd's defaults", () => {
    expect(parseEtcdFlags(["--in-memory"])).toEqual({
      run: {
        name: "default",
        dataDir: "default.etcd",
        inMemory: true,
        listenClientURLs: ["http://localhost:2379"],
        advertiseClientURLs: ["http://localhost:2379"],
        maxRequestBytes: 1572864,
        snapshotCount: 10000,
      },
    });
  });

  it("reads --flag=value, --flag value and -flag, and derives the data dir from the name", () => {
    const cmd = parseEtcdFlags([
      "--name=n1",
      "--listen-client-urls",
      "http://127.0.0.1:2379,http://127.0.0.1:22379",
      "-advertise-client-urls=http://127.0.0.1:2379",
      "--max-request-bytes",
      "1024",
    ]);
    expect(cmd).toMatchObject({
      run: {
        name: "n1",
        dataDir: "n1.etcd",
        inMemory: false,
        listenClientURLs: ["http://127.0.0.1:2379", "http://127.0.0.1:22379"],
        advertiseClientURLs: ["http://127.0.0.1:2379"],
        maxRequestBytes: 1024,
      },
    });
    expect(parseEtcdFlags(["--data-dir", "/tmp/x", "--in-memory=false"])).toMatchObject({
      run: { dataDir: "/tmp/x", inMemory: false },
    });
    expect(parseEtcdFlags(["--snapshot-count=500"])).toMatchObject({ run: { snapshotCount: 500 } });
    // etcd replaces 0 with its default.
    expect(parseEtcdFlags(["--snapshot-count", "0"])).toMatchObject({ run: { snapshotCount: 10000 } });
  });

  it("refuses what etcd refuses, saying how to fix it", () => {
    const err = (argv: string[]) => {
      const r = parseEtcdFlags(argv);
      return r instanceof FlagError ? r.message : `no error: ${JSON.stringify(r)}`;
    };
    // Go's flag package's words, as the real etcd prints them, with a pointer to --help.
    expect(err(["--initial-cluster", "x"])).toBe(
      "etcd: flag provided but not defined: -initial-cluster (see etcd --help)",
    );
    expect(err(["--name"])).toBe("etcd: flag needs an argument: -name");
    expect(err(["serve"])).toBe("etcd: 'serve' is not a valid flag (see etcd --help)");
    expect(err(["--listen-client-urls", "http://127.0.0.1:2379"])).toMatch(
      /--advertise-client-urls is required when --listen-client-urls is set explicitly/,
    );
    expect(err(["--in-memory=yes"])).toBe(
      'etcd: invalid boolean value "yes" for -in-memory: use --in-memory or --in-memory=false',
    );
    expect(err(["--max-request-bytes", "lots"])).toBe(
      'etcd: invalid value "lots" for flag -max-request-bytes: use a positive integer',
    );
    expect(err(["--snapshot-count", "-1"])).toBe(
      'etcd: invalid value "-1" for flag -snapshot-count: use a non-negative integer',
    );
  });

  it("prints help and version", () => {
    expect(parseEtcdFlags(["-h"])).toMatchObject({ print: expect.stringContaining("--listen-client-urls") });
    expect(parseEtcdFlags(["--version"])).toMatchObject({ print: expect.stringContaining("3.5.17") });
  });
});

const entry = fileURLToPath(new URL("./etcd.ts", import.meta.url));

const runEtcd = (args: string[]) => startCommand(entry, args);

describe("the etcd command", () => {
  it("logs etcd's ready line, serves clients, and shuts down cleanly on SIGTERM", async () => {
    const etcd = runEtcd([
      "--in-memory",
      "--listen-client-urls=http://127.0.0.1:0",
      "--advertise-client-urls=http://127.0.0.1:0",
    ]);
    try {
      await waitFor(() => etcd.stderr().includes('"address"'), "the serving line");
      const lines = etcd
        .stderr()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.some((l) => l.level === "info" && l.msg === "ready to serve client requests")).toBe(true);
      const address = lines.find((l) => l.address)?.address as string;
      expect(address).toMatch(/^127\.0\.0\.1:\d+$/);

      const client = new Etcd3({ hosts: address });
      await client.put("k").value("v");
      expect(await client.get("k").string()).toBe("v");
      // An open watch stream must not hold up the shutdown.
      await client.watch().key("k").create();

      etcd.child.kill("SIGTERM");
      expect(await etcd.waitForExit()).toBe(0);
      client.close();
      expect(etcd.stderr()).toContain('"msg":"received signal; shutting down","signal":"terminated"');
      expect(etcd.stderr()).toContain('"msg":"closed etcd server"');
    } finally {
      etcd.child.kill("SIGKILL");
    }
  });

  it("keeps what it acknowledged in --data-dir across a SIGTERM and a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "etcd-cmd-"));
    const args = [
      `--data-dir=${join(dir, "n1.etcd")}`,
      "--listen-client-urls=http://127.0.0.1:0",
      "--advertise-client-urls=http://127.0.0.1:0",
    ];
    const started: ReturnType<typeof runEtcd>[] = [];
    const start = async () => {
      const etcd = runEtcd(args);
      started.push(etcd);
      await waitFor(() => etcd.stderr().includes('"address"'), "the serving line");
      const address = /"address":"([^"]+)"/.exec(etcd.stderr())![1];
      return { etcd, client: new Etcd3({ hosts: address }) };
    };
    try {
      const first = await start();
      const put = await first.client.put("k").value("v");
      await first.client.put("k").value("v2");
      first.etcd.child.kill("SIGTERM");
      expect(await first.etcd.waitForExit()).toBe(0);
      first.client.close();

      const second = await start();
      expect(second.etcd.stderr()).toContain('"msg":"recovered the store from the data directory"');
      const got = await second.client.get("k").exec();
      expect(got.kvs.map((kv) => [String(kv.value), kv.mod_revision, kv.version])).toEqual([
        ["v2", String(Number(put.header.revision) + 1), "2"],
      ]);
      second.etcd.child.kill("SIGTERM");
      expect(await second.etcd.waitForExit()).toBe(0);
      second.client.close();
    } finally {
      for (const etcd of started) etcd.child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("main, in process", () => {
  const capture = () => {
    const out = { stdout: "", stderr: "" };
    const io = {
      stdout: (t: string) => {
        out.stdout += t;
      },
      stderr: (t: string) => {
        out.stderr += t;
      },
    };
    return { out, io };
  };

  it("exits 2 with one line on an unknown flag", async () => {
    const { out, io } = capture();
    expect(await main(["--bogus"], io)).toBe(2);
    expect(out.stderr).toBe("etcd: flag provided but not defined: -bogus (see etcd --help)\n");
  });

  it("exits 1, saying why, when the data directory cannot be used", async () => {
    const dir = await mkdtemp(join(tmpdir(), "etcd-cmd-"));
    try {
      const file = join(dir, "a-file");
      await writeFile(file, "not a directory");
      const { out, io } = capture();
      expect(
        await main(
          [
            "--data-dir",
            file,
            "--listen-client-urls=http://127.0.0.1:0",
            "--advertise-client-urls=http://127.0.0.1:0",
          ],
          io,
        ),
      ).toBe(1);
      const lines = out.stderr
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.at(-1)).toMatchObject({
        level: "error",
        msg: "failed to start etcd",
        error: expect.stringContaining(`cannot open the data directory ${file}`),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
