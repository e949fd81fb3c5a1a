/**
 * EndpointSlice validation — what the API server refuses before a slice reaches storage, with
 * upstream's messages.
 * Mirrors kubernetes/kubernetes pkg/apis/discovery/validation/validation.go.
 *
 * Solves:
 * - kube-proxy trusts a slice's addresses: an IPv4 slice holds only IPv4 addresses, none of them
 *   unspecified, loopback or link-local (an endpoint must be reachable from other nodes);
 * - a consumer joins a service port to a slice port by name: names are DNS labels, unique in the
 *   slice, and every port has a protocol.
 *
 * Invariants:
 * - addressType is required, one of IPv4, IPv6, FQDN, and immutable on update;
 * - each endpoint has 1 to 100 addresses; a slice at most 1000 endpoints and 100 ports;
 * - the checks of an address follow the slice's addressType.
 *
 * @upstream kubernetes/kubernetes pkg/apis/discovery/validation/validation.go (ValidateEndpointSlice, ValidateEndpointSliceCreate, ValidateEndpointSliceUpdate, validateEndpoints, validatePorts, validateAddressType)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/ip.go (IsValidIPv4Address, IsValidIPv6Address)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (IsFullyQualifiedDomainName)
 * @chapter 07-kubelet
 */
import { validateNonSpecialIP } from "./core-validation.ts";
import { supportedAddressTypes } from "./discovery.ts";
import {
  childPath,
  duplicate,
  type FieldError,
  indexPath,
  invalid,
  notSupported,
  required,
  tooMany,
} from "./field-errors.ts";
import { arr, isSet, obj, str } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateImmutableField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  nameIsDNSSubdomain,
  parseIPSloppy,
} from "./string-validation.ts";

const maxAddresses = 100;
const maxPorts = 100;
const maxEndpoints = 1000;
const supportedPortProtocols = ["SCTP", "TCP", "UDP"];

/** IsFullyQualifiedDomainName: a DNS subdomain of at least two labels (a trailing dot is allowed). */
function fqdnErrors(value: string, path: string): FieldError[] {
  const name = value.endsWith(".") ? value.slice(0, -1) : value;
  if (name.length === 0) return [required(path)];
  const errors = isDNS1123Subdomain(name).map((m) => invalid(path, value, m));
  if (name.split(".").length < 2) {
    errors.push(invalid(path, value, "should be a domain with at least two segments separated by dots"));
  }
  return errors;
}

// #region validate-endpointslice
function validateAddress(address: string, addressType: string, path: string): FieldError[] {
  switch (addressType) {
    case "IPv4":
    case "IPv6": {
      const family = addressType === "IPv4" ? 4 : 6;
      if (parseIPSloppy(address)?.family !== family) {
        return [invalid(path, address, `must be a valid ${addressType} address`)];
      }
      return validateNonSpecialIP(address, path);
    }
    case "FQDN":
      return fqdnErrors(address, path);
    default:
      return []; // an unknown type is already refused at addressType
  }
}

function validateEndpointList(endpoints: unknown[], addressType: string): FieldError[] {
  if (endpoints.length > maxEndpoints) return [tooMany("endpoints", endpoints.length, maxEndpoints)];
  const errors: FieldError[] = [];
  endpoints.forEach((entry, i) => {
    const endpoint = obj(entry) ?? {};
    const at = indexPath("endpoints", i);
    const addressPath = childPath(at, "addresses");
    const addresses = arr(endpoint.addresses);
    if (addresses.length === 0) errors.push(required(addressPath, "must contain at least 1 address"));
    else if (addresses.length > maxAddresses)
      errors.push(tooMany(addressPath, addresses.length, maxAddresses));
    addresses.forEach((a, j) => {
      errors.push(...validateAddress(str(a), addressType, indexPath(addressPath, j)));
    });
    if (isSet(endpoint.hostname)) {
      const hostname = str(endpoint.hostname);
      for (const m of isDNS1123Label(hostname)) errors.push(invalid(childPath(at, "hostname"), hostname, m));
    }
  });
  return errors;
}

function validatePorts(ports: unknown[]): FieldError[] {
  if (ports.length > maxPorts) return [tooMany("ports", ports.length, maxPorts)];
  const errors: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((entry, i) => {
    const port = obj(entry) ?? {};
    const at = indexPath("ports", i);
    const name = str(port.name);
    if (name.length > 0)
      for (const m of isDNS1123Label(name)) errors.push(invalid(childPath(at, "name"), name, m));
    if (names.has(name)) errors.push(duplicate(childPath(at, "name"), name));
    else names.add(name);
    if (!isSet(port.protocol)) errors.push(required(childPath(at, "protocol")));
    else if (!supportedPortProtocols.includes(str(port.protocol))) {
      errors.push(notSupported(childPath(at, "protocol"), str(port.protocol), supportedPortProtocols));
    }
    if (isSet(port.appProtocol)) {
      const p = str(port.appProtocol);
      for (const m of isQualifiedName(p)) errors.push(invalid(childPath(at, "appProtocol"), p, m));
    }
  });
  return errors;
}

/** ValidateEndpointSlice (create): metadata, the address type, every endpoint, every port. */
export function validateEndpointSlice(slice: KubeObject): FieldError[] {
  const errors = validateObjectMeta(slice.metadata, true, nameIsDNSSubdomain);
  const addressType = str(slice.addressType);
  if (addressType === "") errors.push(required("addressType"));
  else if (!supportedAddressTypes.includes(addressType as never)) {
    // sets.String.List(): the supported values sorted.
    errors.push(notSupported("addressType", addressType, [...supportedAddressTypes].sort()));
  }
  errors.push(...validateEndpointList(arr(slice.endpoints), addressType));
  errors.push(...validatePorts(arr(slice.ports)));
  return errors;
}
// #endregion validate-endpointslice

/** ValidateEndpointSliceUpdate: as create, and the address type may not change. */
export function validateEndpointSliceUpdate(slice: KubeObject, old: KubeObject): FieldError[] {
  const errors = [...validateObjectMetaUpdate(slice.metadata, old.metadata), ...validateEndpointSlice(slice)];
  errors.push(...validateImmutableField(str(slice.addressType), str(old.addressType), "addressType"));
  return errors;
}
