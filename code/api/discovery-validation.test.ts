// EndpointSlice validation: upstream's messages for the address type, the addresses of each
// endpoint (of the slice's type, none special), port names and protocols, and the immutable type.
import { describe, expect, it } from "vitest";
import { validateEndpointSlice, validateEndpointSliceUpdate } from "./discovery-validation.ts";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";

const slice = (fields: Record<string, unknown>): KubeObject => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: "web-abcde", namespace: "default" },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.244.0.10"] }],
  ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  ...fields,
});
const messages = (o: KubeObject) => validateEndpointSlice(o).map(fieldErrorToString);

describe("validateEndpointSlice", () => {
  it("accepts what the controller writes, and an empty placeholder", () => {
    expect(messages(slice({}))).toEqual([]);
    expect(messages(slice({ endpoints: [], ports: [] }))).toEqual([]);
    expect(messages(slice({ addressType: "FQDN", endpoints: [{ addresses: ["db.example.com"] }] }))).toEqual(
      [],
    );
  });

  it("requires a supported address type", () => {
    expect(messages(slice({ addressType: "" }))).toEqual(["addressType: Required value"]);
    expect(messages(slice({ addressType: "IP" }))).toEqual([
      'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
    ]);
  });

  it("requires at least one address per endpoint, of the slice's type, and not special", () => {
    expect(messages(slice({ endpoints: [{ addresses: [] }] }))).toEqual([
      "endpoints[0].addresses: Required value: must contain at least 1 address",
    ]);
    expect(messages(slice({ endpoints: [{ addresses: ["fd00::1"] }] }))).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address',
    ]);
    expect(messages(slice({ endpoints: [{ addresses: ["127.0.0.1"] }] }))).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
  });

  it("refuses duplicate port names and unknown protocols", () => {
    const errs = messages(
      slice({
        ports: [
          { name: "http", port: 80, protocol: "TCP" },
          { name: "http", port: 81, protocol: "HTTP" },
        ],
      }),
    );
    expect(errs).toEqual([
      'ports[1].name: Duplicate value: "http"',
      'ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    ]);
  });

  it("keeps the address type on update", () => {
    const old = { ...slice({}), metadata: { name: "web-abcde", namespace: "default", resourceVersion: "1" } };
    const next = { ...slice({ addressType: "IPv6", endpoints: [] }), metadata: old.metadata };
    expect(validateEndpointSliceUpdate(next, old).map(fieldErrorToString)).toEqual([
      'addressType: Invalid value: "IPv6": field is immutable',
    ]);
  });
});
