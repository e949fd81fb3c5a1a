import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PodNetwork, podRange, portMapFile, readPortMap, writeFileAtomic } from "./pod-network.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "pod-network-"));
  dirs.push(d);
  return d;
}

describe("PodNetwork", () => {
  it("hands out IPs from the pod CIDR after the gateway, round-robin, never one still held", () => {
    const net = new PodNetwork(tempDir(), "10.244.3.0/24");
    expect(net.allocate("a")).toBe("10.244.3.2");
    expect(net.allocate("b")).toBe("10.244.3.3");
    net.release("a", "10.244.3.2");
    // A freed IP is not reused at once: allocation goes on after the last reserved one.
    expect(net.allocate("c")).toBe("10.244.3.4");
    expect(net.holderOf("10.244.3.3")).toBe("b");
    expect(net.holderOf("10.244.3.2")).toBeUndefined();
  });

  it("wraps around, skips held IPs, and says when the range is full", () => {
    const net = new PodNetwork(tempDir(), "10.244.9.0/29"); // .2 … .6
    const got = ["a", "b", "c", "d", "e"].map((id) => net.allocate(id));
    expect(got).toEqual(["10.244.9.2", "10.244.9.3", "10.244.9.4", "10.244.9.5", "10.244.9.6"]);
    expect(() => net.allocate("f")).toThrow("no IP addresses available in range set: 10.244.9.2-10.244.9.6");
    net.release("c", "10.244.9.4");
    expect(net.allocate("f")).toBe("10.244.9.4");
  });

  it("keeps its allocations on disk for the next instance", () => {
    const dir = tempDir();
    new PodNetwork(dir, "10.244.1.0/24").allocate("a");
    const again = new PodNetwork(dir, "10.244.1.0/24");
    expect(again.holderOf("10.244.1.2")).toBe("a");
    expect(again.allocate("b")).toBe("10.244.1.3");
  });

  it("refuses a loopback or malformed CIDR", () => {
    expect(() => podRange("127.0.0.0/24")).toThrow("may not be in the loopback range");
    expect(() => podRange("10.244.1.0/33")).toThrow("invalid CIDR address");
    expect(() => podRange("10.244.1/24")).toThrow("invalid CIDR address");
    expect(podRange("10.244.1.77/24")).toEqual(podRange("10.244.1.0/24"));
  });

  it("resolves (podIP, port) through the port map and forgets an exited container's entries", () => {
    const dir = tempDir();
    const net = new PodNetwork(dir);
    const entry = (podIP: string, containerPort: number, port: number, containerId: string) =>
      writeFileAtomic(
        portMapFile(dir, podIP, containerPort),
        JSON.stringify({ podIP, containerPort, host: "127.0.0.1", port, containerId }),
      );
    entry("10.244.0.2", 8080, 40001, "c1");
    entry("10.244.0.3", 8080, 40002, "c2");
    expect(net.resolve("10.244.0.2", 8080)).toEqual({ host: "127.0.0.1", port: 40001 });
    expect(net.resolve("10.244.0.3", 8080)).toEqual({ host: "127.0.0.1", port: 40002 });
    expect(net.resolve("10.244.0.3", 9090)).toBeUndefined();
    expect(readPortMap(dir)).toHaveLength(2);
    net.removeContainerPorts("c1");
    expect(net.resolve("10.244.0.2", 8080)).toBeUndefined();
    net.release("sandbox-of-c2", "10.244.0.3");
    expect(readPortMap(dir)).toEqual([]);
  });
});
