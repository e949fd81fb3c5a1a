import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../../../testing/wait-for.ts";
import {
  formatTimestampNs,
  type LogOptions,
  newLogOptions,
  parseCRILog,
  parseTimestampNs,
  readLogs,
} from "./logs.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cri-logs-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const all: LogOptions = { tail: -1, bytes: -1, sinceNs: 0n, follow: false, timestamp: false };

/** A sink that keeps what each stream received, and the order the two were written in. */
function sinks() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  const both: string[] = [];
  stdout.on("data", (d: Buffer) => {
    out.push(d.toString());
    both.push(d.toString());
  });
  stderr.on("data", (d: Buffer) => {
    err.push(d.toString());
    both.push(d.toString());
  });
  return {
    sinks: { stdout, stderr },
    out: () => out.join(""),
    err: () => err.join(""),
    both: () => both.join(""),
  };
}

async function file(lines: string[]): Promise<string> {
  const path = join(dir, "0.log");
  await writeFile(path, lines.join(""));
  return path;
}

describe("parseCRILog", () => {
  it("splits time, stream, tag and content; a full line keeps its line end", () => {
    const msg = parseCRILog(Buffer.from("2016-10-06T00:17:09.669794202Z stdout F log content 1\n"));
    if (msg instanceof Error) throw msg;
    expect(msg.stream).toBe("stdout");
    expect(msg.log.toString()).toBe("log content 1\n");
    expect(formatTimestampNs(msg.timestampNs)).toBe("2016-10-06T00:17:09.669794202Z");
  });

  it("drops a partial line's line end, and reads the first of several tags", () => {
    const msg = parseCRILog(Buffer.from("2016-10-06T00:17:09.669794203Z stderr P:extra chunk\n"));
    if (msg instanceof Error) throw msg;
    expect(msg.stream).toBe("stderr");
    expect(msg.log.toString()).toBe("chunk");
  });

  it("refuses a line without its fields or with an unknown stream", () => {
    expect(parseCRILog(Buffer.from("nonsense\n"))).toBeInstanceOf(Error);
    expect(parseCRILog(Buffer.from("2016-10-06T00:17:09Z stdin F x\n"))).toBeInstanceOf(Error);
    expect(parseCRILog(Buffer.from("yesterday stdout F x\n"))).toBeInstanceOf(Error);
  });

  it("reads lenient timestamps (fewer digits, an offset) and writes nine digits in UTC", () => {
    expect(formatTimestampNs(parseTimestampNs("2024-01-02T03:04:05.5+01:00") as bigint)).toBe(
      "2024-01-02T02:04:05.500000000Z",
    );
    expect(formatTimestampNs(parseTimestampNs("2024-01-02T03:04:05Z") as bigint)).toBe(
      "2024-01-02T03:04:05.000000000Z",
    );
  });
});

describe("readLogs", () => {
  const lines = [
    "2024-01-01T00:00:01.000000001Z stdout F one\n",
    "2024-01-01T00:00:02.000000002Z stderr F two\n",
    "2024-01-01T00:00:03.000000003Z stdout P thr\n",
    "2024-01-01T00:00:03.500000000Z stdout F ee\n",
    "2024-01-01T00:00:04.000000004Z stdout F four\n",
  ];

  it("writes each stream's content, joining partial chunks into one line", async () => {
    const s = sinks();
    await readLogs(await file(lines), all, s.sinks);
    expect(s.out()).toBe("one\nthree\nfour\n");
    expect(s.err()).toBe("two\n");
    expect(s.both()).toBe("one\ntwo\nthree\nfour\n");
  });

  it("prefixes every chunk with its time when asked for timestamps", async () => {
    const s = sinks();
    await readLogs(await file(lines.slice(0, 2)), { ...all, timestamp: true }, s.sinks);
    expect(s.both()).toBe("2024-01-01T00:00:01.000000001Z one\n2024-01-01T00:00:02.000000002Z two\n");
  });

  it("tails the last n lines of the file (a partial chunk counts as a line)", async () => {
    const path = await file(lines);
    for (const [tail, want] of [
      [0, ""],
      [1, "four\n"],
      [2, "ee\nfour\n"],
      [3, "three\nfour\n"],
      [99, "one\ntwo\nthree\nfour\n"],
    ] as const) {
      const s = sinks();
      await readLogs(path, { ...all, tail }, s.sinks);
      expect(s.both(), `tail ${tail}`).toBe(want);
    }
  });

  it("skips what was written before sinceTime, and stops at limitBytes", async () => {
    const path = await file(lines);
    const since = newLogOptions({ sinceTime: "2024-01-01T00:00:03Z" }, new Date());
    const s = sinks();
    await readLogs(path, since, s.sinks);
    expect(s.both()).toBe("three\nfour\n");
    const cut = sinks();
    await readLogs(path, { ...all, bytes: 6 }, cut.sinks);
    expect(cut.both()).toBe("one\ntw");
  });

  it("skips a corrupt line and reads an incomplete last line when not following", async () => {
    const s = sinks();
    await readLogs(
      await file([lines[0] as string, "garbage\n", "2024-01-01T00:00:05Z stdout F tail"]),
      all,
      s.sinks,
    );
    expect(s.both()).toBe("one\ntail");
  });

  it("follows the file as it grows, and stops once the container no longer runs", async () => {
    const path = await file([lines[0] as string]);
    const s = sinks();
    let running = true;
    const done = readLogs(path, { ...all, follow: true }, s.sinks, {
      isContainerRunning: () => running,
      stateCheckPeriodMs: 300,
    });
    await waitFor("the log so far", async () => s.both() === "one\n");
    await appendFile(path, "2024-01-01T00:00:05.000000000Z stdout F half");
    await appendFile(path, " and half\n"); // an incomplete line is read again once complete
    await appendFile(path, "2024-01-01T00:00:06.000000000Z stdout F whole\n");
    await waitFor("the log so far", async () => s.both() === "one\nhalf and half\nwhole\n");
    let ended = false;
    void done.then(() => {
      ended = true;
    });
    await appendFile(path, "2024-01-01T00:00:07.000000000Z stderr F last words\n");
    running = false;
    await done;
    expect(ended).toBe(true);
    expect(s.both()).toBe("one\nhalf and half\nwhole\nlast words\n");
  });

  it("following an exited container prints its log and ends without waiting a state-check period", async () => {
    const s = sinks();
    // With a minute between state checks, only the check made at the end of the file can end this.
    await readLogs(await file(lines.slice(0, 2)), { ...all, follow: true }, s.sinks, {
      isContainerRunning: () => false,
      stateCheckPeriodMs: 60_000,
    });
    expect(s.both()).toBe("one\ntwo\n");
  });

  it("stops following when the client goes away", async () => {
    const path = await file([lines[0] as string]);
    const s = sinks();
    const ac = new AbortController();
    const done = readLogs(path, { ...all, follow: true }, s.sinks, {
      signal: ac.signal,
      isContainerRunning: () => true,
      stateCheckPeriodMs: 100,
    });
    await waitFor("the log so far", async () => s.both() === "one\n");
    ac.abort();
    await done;
    expect(s.both()).toBe("one\n");
  });
});
