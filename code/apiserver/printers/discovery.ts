/**
 * discovery.k8s.io/v1 table: endpointslices (NAME ADDRESSTYPE PORTS ENDPOINTS AGE).
 * Upstream: printEndpointSlice in pkg/printers/internalversion/printers.go.
 *
 * Solves: "which pods does this slice send traffic to?" at a glance — the first three port
 * numbers and the first three addresses, then how many more.
 *
 * Invariants: an empty list prints `<unset>`; past three entries, `a,b,c + N more...`; a port
 * without a number prints its name, one without either `*`.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (endpointSliceColumnDefinitions, printEndpointSlice, formatDiscoveryPorts, formatDiscoveryEndpoints, listWithMoreString)
 * @chapter 07-kubelet
 */
import type { EndpointSlice } from "../../api/discovery.ts";
import { ageColumn, column, nameColumn, translateTimestampSince } from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

const shown = 3;

/** `a,b,c + N more...` past three entries; `<unset>` for none. */
function listWithMore(all: string[]): string {
  const list = all.slice(0, shown).join(",");
  if (all.length > shown) return `${list} + ${all.length - shown} more...`;
  return list === "" ? "<unset>" : list;
}

export function formatDiscoveryPorts(slice: EndpointSlice): string {
  return listWithMore(
    (slice.ports ?? []).map((p) => (p.port !== undefined ? String(p.port) : (p.name ?? "*"))),
  );
}

export function formatDiscoveryEndpoints(slice: EndpointSlice): string {
  return listWithMore((slice.endpoints ?? []).flatMap((e) => e.addresses ?? []));
}

const endpointSlicePrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "AddressType",
      "string",
      "addressType specifies the type of address carried by this EndpointSlice.",
    ),
    column(
      "Ports",
      "string",
      "ports specifies the list of network ports exposed by each endpoint in this slice.",
    ),
    column("Endpoints", "string", "endpoints is a list of unique endpoints in this slice."),
    ageColumn,
  ],
  print: (obj, now) => {
    const slice = obj as EndpointSlice;
    return {
      cells: [
        slice.metadata.name ?? "",
        slice.addressType ?? "",
        formatDiscoveryPorts(slice),
        formatDiscoveryEndpoints(slice),
        translateTimestampSince(slice.metadata.creationTimestamp, now),
      ],
    };
  },
};

export const discoveryPrinters: Readonly<Record<string, TablePrinter>> = {
  endpointslices: endpointSlicePrinter,
};
