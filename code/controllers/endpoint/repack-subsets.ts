/**
 * RepackSubsets — the canonical layout of an Endpoints object's subsets: every distinct set of
 * addresses once, with all the ports it offers, sorted.
 * Mirrors kubernetes/kubernetes pkg/api/v1/endpoints/util.go (RepackSubsets, mapAddressesByPort,
 * mapAddressByPort, SortSubsets).
 *
 * Solves:
 * - the controller builds one subset per (pod, port) — simple to write, huge to store: three
 *   pods serving ports 80 and 443 would be six subsets. Repacking groups the ports that the same
 *   addresses offer, so they become one subset of three addresses and two ports;
 * - "did anything change?" must be a plain comparison: the same pods always repack to the same
 *   subsets in the same order, whatever order the informer listed them in.
 *
 * Invariants:
 * - an address is identified by IP + targetRef UID: the same IP from two pods (a reused IP) stays
 *   two addresses;
 * - an address that is not ready for one port is listed as not ready for that port even if
 *   another subset said it was ready ("not ready always trumps ready");
 * - a subset without ports (a headless Service without ports) survives, as a subset without ports;
 * - addresses are sorted by IP then UID; ports and subsets by a key of their content.
 *
 * What upstream does differently: it orders ports and subsets by an MD5 hash of Go's spew dump
 * of each (portsByHash, subsetsByHash) — a stable but arbitrary order. Ours is the same idea over
 * the JSON of each, so the order (not the content) may differ from a real cluster's.
 *
 * @upstream kubernetes/kubernetes pkg/api/v1/endpoints/util.go (RepackSubsets, addressKey, mapAddressesByPort, mapAddressByPort, SortSubsets, addrsByIPAndUID)
 * @chapter 07-kubelet
 */
import type { EndpointAddress, EndpointPort, EndpointSubset } from "../../api/core.ts";

/** The port of a subset without ports (upstream's sentinel `EndpointPort{Port: -1}`). */
const noPort: EndpointPort = { port: -1 };

const portKey = (p: EndpointPort) =>
  JSON.stringify([p.name ?? "", p.port, p.protocol ?? "", p.appProtocol ?? ""]);
const addressKey = (a: EndpointAddress) => `${a.ip}\u0000${a.targetRef?.uid ?? ""}`;

function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  const ua = a.targetRef?.uid ?? "";
  const ub = b.targetRef?.uid ?? "";
  return ua < ub ? -1 : ua > ub ? 1 : 0;
}

const byString =
  <T>(key: (t: T) => string) =>
  (a: T, b: T) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  };

// #region repack-subsets
export function repackSubsets(subsets: readonly EndpointSubset[]): EndpointSubset[] {
  // 1. For every port, which addresses offer it, and whether each is ready there.
  const allAddrs = new Map<string, EndpointAddress>();
  const portToAddrReady = new Map<string, { port: EndpointPort; addrs: Map<string, boolean> }>();
  const mapAddressByPort = (addr: EndpointAddress, port: EndpointPort, ready: boolean) => {
    const key = addressKey(addr);
    if (!allAddrs.has(key)) allAddrs.set(key, addr);
    const pk = portKey(port);
    let entry = portToAddrReady.get(pk);
    if (!entry) {
      entry = { port, addrs: new Map() };
      portToAddrReady.set(pk, entry);
    }
    // Not ready always trumps ready: only an unseen or ready entry takes the new state.
    const was = entry.addrs.get(key);
    if (was === undefined || was) entry.addrs.set(key, ready);
  };
  for (const subset of subsets) {
    const ports = subset.ports && subset.ports.length > 0 ? subset.ports : [noPort];
    for (const port of ports) {
      for (const a of subset.addresses ?? []) mapAddressByPort(a, port, true);
      for (const a of subset.notReadyAddresses ?? []) mapAddressByPort(a, port, false);
    }
  }
  // 2. Group the ports by the exact set of (address, ready) that offers them.
  const groups = new Map<string, { addrs: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const { port, addrs } of portToAddrReady.values()) {
    const setKey = JSON.stringify([...addrs.entries()].sort(byString(([k, r]) => `${k}\u0000${r}`)));
    let g = groups.get(setKey);
    if (!g) {
      g = { addrs, ports: [] };
      groups.set(setKey, g);
    }
    if (port.port > 0) g.ports.push(port); // the sentinel only keeps the group alive
  }
  // 3. One subset per group, then sort everything.
  const final: EndpointSubset[] = [];
  for (const { addrs, ports } of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [key, isReady] of addrs) (isReady ? ready : notReady).push(allAddrs.get(key)!);
    const subset: EndpointSubset = {};
    if (ready.length > 0) subset.addresses = ready;
    if (notReady.length > 0) subset.notReadyAddresses = notReady;
    if (ports.length > 0) subset.ports = ports;
    final.push(subset);
  }
  return sortSubsets(final);
}
// #endregion repack-subsets

/** SortSubsets: addresses by IP and UID, ports and subsets by their content. */
export function sortSubsets(subsets: EndpointSubset[]): EndpointSubset[] {
  for (const s of subsets) {
    s.addresses?.sort(compareAddresses);
    s.notReadyAddresses?.sort(compareAddresses);
    s.ports?.sort(byString(portKey));
  }
  return subsets.sort(byString((s) => JSON.stringify(s)));
}
