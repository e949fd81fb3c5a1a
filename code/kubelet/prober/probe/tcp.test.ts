import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../testing/ports.ts";
import { dialErrorText, doTCPProbe } from "./tcp.ts";

let server: Server;
let port: number;
let accepted = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  port = await new Promise<number>((r) =>
    server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port)),
  );
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

describe("doTCPProbe", () => {
  it("is a success when the port accepts a connection", async () => {
    const before = accepted;
    expect(await doTCPProbe("127.0.0.1", port, 10_000)).toEqual({ result: "success", output: "" });
    expect(accepted).toBe(before + 1);
  });

  it("is a failure with Go's dial text when nothing listens", async () => {
    const closed = await freePort();
    expect(await doTCPProbe("127.0.0.1", closed, 10_000)).toEqual({
      result: "failure",
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
  });
});

describe("dialErrorText", () => {
  it("spells Node's errors as Go's net.OpError, IPv6 in brackets", () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(dialErrorText(err("EHOSTUNREACH"), "[fd00::1]:80")).toBe(
      "dial tcp [fd00::1]:80: connect: no route to host",
    );
    expect(dialErrorText(err("ETIMEDOUT"), "10.0.0.9:5432")).toBe("dial tcp 10.0.0.9:5432: i/o timeout");
    expect(dialErrorText(err("ENOTFOUND"), "db.invalid:5432")).toBe(
      "dial tcp: lookup db.invalid: no such host",
    );
  });
});
