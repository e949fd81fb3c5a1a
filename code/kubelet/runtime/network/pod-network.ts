/**
 * PodNetwork — the CNI plugin's job on one machine without root: a pod IP for every sandbox from
 * the node's pod CIDR, and a map from (podIP, containerPort) to the loopback port the container
 * really listens on. Mirrors upstream's containernetworking/plugins plugins/ipam/host-local.
 * Mirrors containernetworking/plugins plugins/ipam/host-local/backend/allocator/allocator.go.
 *
 * Solves:
 * - every pod needs its own IP (status.podIP, Endpoints), and Endpoints refuse loopback addresses
 *   ("may not be in the loopback range"), so the IP comes from a pod CIDR such as 10.244.1.0/24 —
 *   but an unprivileged process cannot listen on 10.244.1.7. The container listens on a free
 *   loopback port instead (the shim maps its `listen(8080)`), and the map says where
 *   10.244.1.7:8080 really is. Two pods may then both "listen on 8080".
 * - everything in the kubelet that dials a pod (probes, lifecycle hooks) asks `resolve(podIP, port)`;
 *   a test or demo on the same machine reads the same map from the root dir (`readPortMap`).
 * - a restarted kubelet must find the same IPs and ports: both live on disk, one file per IP as
 *   host-local keeps them (/var/lib/cni/networks/<net>/<ip>, content = the container id), plus
 *   `last_reserved_ip`, from which the next allocation goes round-robin.
 *
 * Invariants:
 * - an IP belongs to at most one sandbox, and is not handed out again until that sandbox releases
 *   it (RemovePodSandbox); allocation starts after the last reserved IP, so freed IPs are reused late.
 * - the network's first address is the gateway (.1 in a /24) and is never given to a pod, nor is
 *   the broadcast address; a loopback CIDR is refused.
 * - a port-map entry names the container that listens; the runtime deletes a container's entries
 *   when it exits, so a stale entry never points at a port another process got since.
 *
 * What upstream does differently: a real pod IP is an address on the pod's own network interface
 * (a veth in its network namespace); anyone on the node, or on the cluster network, reaches it
 * directly. Here the IP is a name: only clients that go through `resolve` (the kubelet's probes,
 * our tests and demos) reach the pod; `curl 10.244.1.7:8080` from a shell does not.
 *
 * @upstream containernetworking/plugins plugins/ipam/host-local/backend/allocator/allocator.go (Allocator.Get: round-robin from the last reserved IP)
 * @upstream containernetworking/plugins plugins/ipam/host-local/backend/disk/backend.go (one file per IP, last_reserved_ip)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (validateNonSpecialIP: "may not be in the loopback range")
 * @chapter 07-kubelet
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Where a (podIP, containerPort) really is. */
export interface PortTarget {
  host: string;
  port: number;
}

/** One entry of the port map, as the shim writes it. */
export interface PortMapEntry extends PortTarget {
  podIP: string;
  containerPort: number;
  containerId: string;
}

export const defaultPodCIDR = "10.244.0.0/24";

function ipToInt(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`invalid CIDR address: ${ip}`);
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/** The usable pod range of an IPv4 CIDR: from the address after the gateway to the one before broadcast. */
export function podRange(cidr: string): { first: number; last: number } {
  const [addr, bitsText] = cidr.split("/");
  const bits = Number(bitsText);
  if (!Number.isInteger(bits) || bits < 8 || bits > 30) throw new Error(`invalid CIDR address: ${cidr}`);
  const size = 2 ** (32 - bits);
  const network = ipToInt(addr) - (ipToInt(addr) % size);
  if (network >>> 24 === 127)
    throw new Error(`pod CIDR ${cidr} may not be in the loopback range (127.0.0.0/8)`);
  return { first: network + 2, last: network + size - 2 };
}

/** The file name of a port-map entry: `<podIP>_<containerPort>.json`. */
export function portMapFile(dir: string, podIP: string, containerPort: number): string {
  return join(dir, "ports", `${podIP}_${containerPort}.json`);
}

/** Writes `data` to `file` so that a reader sees the old or the new content, never half of one. */
export function writeFileAtomic(file: string, data: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

/** Every port-map entry under a network dir — for tests and demos on the same machine. */
export function readPortMap(dir: string): PortMapEntry[] {
  let names: string[];
  try {
    names = readdirSync(join(dir, "ports"));
  } catch {
    return [];
  }
  const out: PortMapEntry[] = [];
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    try {
      out.push(JSON.parse(readFileSync(join(dir, "ports", name), "utf8")) as PortMapEntry);
    } catch {
      // Removed between readdir and read: the container exited.
    }
  }
  return out;
}

export class PodNetwork {
  private readonly range: { first: number; last: number };

  /** `dir` holds the IP files and the port map; `podCIDR` is the node's (--pod-cidr). */
  constructor(
    readonly dir: string,
    readonly podCIDR = defaultPodCIDR,
  ) {
    this.range = podRange(podCIDR);
    mkdirSync(join(dir, "ips"), { recursive: true });
    mkdirSync(join(dir, "ports"), { recursive: true });
  }

  // #region pod-network
  /** An IP for the sandbox: the first free one after the last reserved, wrapping around. */
  allocate(sandboxId: string): string {
    const taken = new Set(readdirSync(join(this.dir, "ips")));
    const size = this.range.last - this.range.first + 1;
    const last = this.readLastReserved();
    const start = last >= this.range.first && last <= this.range.last ? last + 1 : this.range.first;
    for (let i = 0; i < size; i++) {
      const ip = intToIp(this.range.first + ((start - this.range.first + i) % size));
      if (taken.has(ip)) continue;
      // wx: if another runtime on the same dir took it in between, this throws rather than share.
      writeFileSync(join(this.dir, "ips", ip), sandboxId, { flag: "wx" });
      writeFileAtomic(join(this.dir, "last_reserved_ip.0"), ip);
      return ip;
    }
    throw new Error(
      `no IP addresses available in range set: ${intToIp(this.range.first)}-${intToIp(this.range.last)}`,
    );
  }

  /** Where a client really connects for podIP:port, or undefined if nothing listens there. */
  resolve(podIP: string, port: number): PortTarget | undefined {
    try {
      const entry = JSON.parse(readFileSync(portMapFile(this.dir, podIP, port), "utf8")) as PortMapEntry;
      return { host: entry.host, port: entry.port };
    } catch {
      return undefined;
    }
  }
  // #endregion pod-network

  /** Frees the sandbox's IP (and any port entries left for it). Idempotent. */
  release(sandboxId: string, ip: string): void {
    this.removePorts((e) => e.podIP === ip);
    const file = join(this.dir, "ips", ip);
    try {
      if (readFileSync(file, "utf8") === sandboxId) rmSync(file);
    } catch {
      // Already released.
    }
  }

  /** Deletes the port-map entries of an exited container. */
  removeContainerPorts(containerId: string): void {
    this.removePorts((e) => e.containerId === containerId);
  }

  /** The sandbox id holding `ip`, if any. */
  holderOf(ip: string): string | undefined {
    try {
      return readFileSync(join(this.dir, "ips", ip), "utf8");
    } catch {
      return undefined;
    }
  }

  private removePorts(match: (e: PortMapEntry) => boolean): void {
    for (const e of readPortMap(this.dir))
      if (match(e)) rmSync(portMapFile(this.dir, e.podIP, e.containerPort), { force: true });
  }

  private readLastReserved(): number {
    try {
      return ipToInt(readFileSync(join(this.dir, "last_reserved_ip.0"), "utf8").trim());
    } catch {
      return -1;
    }
  }
}
