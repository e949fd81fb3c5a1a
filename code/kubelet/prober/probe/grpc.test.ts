import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../testing/ports.ts";
import { doGRPCProbe, healthService, type ServingStatus } from "./grpc.ts";

const statuses: Record<string, ServingStatus> = { "": "SERVING", db: "NOT_SERVING" };
let health: grpc.Server;
let empty: grpc.Server;
let port: number;
let emptyPort: number;
const userAgents: string[] = [];

function listen(server: grpc.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
}

beforeAll(async () => {
  health = new grpc.Server();
  health.addService(healthService, {
    Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      userAgents.push(String(call.metadata.get("user-agent")[0] ?? ""));
      const s = statuses[call.request.service];
      if (!s) return cb({ code: grpc.status.NOT_FOUND, details: "unknown service" });
      if (call.request.service === "slow") return; // never answers
      cb(null, { status: s });
    },
  });
  port = await listen(health);
  empty = new grpc.Server(); // implements nothing: every method is UNIMPLEMENTED
  emptyPort = await listen(empty);
});
afterAll(() => {
  health?.forceShutdown();
  empty?.forceShutdown();
});

describe("the gRPC probe", () => {
  it("SERVING is success, with kube-probe/1.32 as the user agent", async () => {
    expect(await doGRPCProbe("127.0.0.1", "", port, 2000)).toEqual({
      result: "success",
      output: "service healthy",
    });
    expect(userAgents.at(-1)).toMatch(/^kube-probe\/1\.32/);
  });

  it("NOT_SERVING is failure, with the status in the output", async () => {
    expect(await doGRPCProbe("127.0.0.1", "db", port, 2000)).toEqual({
      result: "failure",
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
  });

  it("a server without the health service: failure, said so", async () => {
    const out = await doGRPCProbe("127.0.0.1", "", emptyPort, 2000);
    expect(out.result).toBe("failure");
    expect(out.output).toMatch(
      /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /,
    );
  });

  it("nothing listening: a blocking dial, so a timeout naming the address and the timeout", async () => {
    const closed = await freePort();
    expect(await doGRPCProbe("127.0.0.1", "", closed, 300)).toEqual({
      result: "failure",
      output: `timeout: failed to connect service "127.0.0.1:${closed}" within 300ms: context deadline exceeded`,
    });
  });

  it("through the pod network: the pod's address in messages, the real port dialled", async () => {
    const dial = (host: string, p: number) =>
      host === "10.244.1.9" && p === 9000 ? { host: "127.0.0.1", port } : undefined;
    expect((await doGRPCProbe("10.244.1.9", "", 9000, 2000, dial)).result).toBe("success");
    expect((await doGRPCProbe("10.244.1.10", "", 9000, 200, dial)).output).toBe(
      'timeout: failed to connect service "10.244.1.10:9000" within 200ms: context deadline exceeded',
    );
  });
});
