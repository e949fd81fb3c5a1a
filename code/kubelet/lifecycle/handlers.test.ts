import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Container, Pod } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { FakeImageService } from "../runtime/fake-image-service.ts";
import { FakeRuntimeService } from "../runtime/fake-runtime-service.ts";
import { HandlerRunner } from "./handlers.ts";

const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid: "u" },
  spec: { containers: [] },
};
const container: Container = { name: "app", image: "web:1", ports: [{ name: "http", containerPort: 8080 }] };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A loopback server standing in for the pod at 10.88.0.7:8080. */
async function podServer(status: number) {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    res.statusCode = status;
    res.end("bye");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return { seen, port: (server.address() as AddressInfo).port };
}

function runner(resolvePort: number) {
  const clock = new FakeClock(0);
  const images = new FakeImageService();
  return new HandlerRunner({
    runtimeService: new FakeRuntimeService(clock, images),
    clock,
    getPodIPs: async () => ["10.88.0.7"],
    podNetworkResolve: (ip, port) => {
      expect([ip, port]).toEqual(["10.88.0.7", 8080]);
      return { host: "127.0.0.1", port: resolvePort };
    },
  });
}

describe("HandlerRunner: httpGet hooks", () => {
  it("GETs the pod's IP and named port through the pod network, as kube-lifecycle; a 500 is still success", async () => {
    const srv = await podServer(500);
    const failed = await runner(srv.port).run("c1", pod, container, {
      httpGet: { path: "/drain", port: "http" },
    });
    expect(failed).toBeUndefined();
    expect(srv.seen).toHaveLength(1);
    expect(srv.seen[0].url).toBe("/drain");
    expect(srv.seen[0].headers["user-agent"]).toBe("kube-lifecycle/1.32");
  });

  it("fails with upstream's message when nothing answers", async () => {
    const srv = await podServer(200);
    await closers.pop()?.(); // nobody listens there any more
    const failed = await runner(srv.port).run("c1", pod, container, {
      httpGet: { path: "/drain", port: 8080 },
    });
    expect(failed?.message).toMatch(
      /^HTTP lifecycle hook \(\/drain\) for Container "app" in Pod "web_default\(u\)" failed - error: /,
    );
  });

  it("refuses a tcpSocket hook", async () => {
    const failed = await runner(1).run("c1", pod, container, { tcpSocket: { port: 8080 } });
    expect(failed?.message).toMatch(/^Cannot run handler: invalid handler: /);
  });
});
