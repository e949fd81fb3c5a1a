import { describe, expect, it } from "vitest";
import {
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isEnvVarName,
  isValidIP,
  isValidPercent,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validatePathSegmentName,
} from "./string-validation.ts";

// Messages are apimachinery v0.32 (Kubernetes v1.32) pkg/util/validation/validation.go's,
// including RegexError's double space before each "or".

describe("DNS names", () => {
  it.each<[string, string[]]>([
    ["*.example.com", []],
    ["*.a", []],
    [
      "*.*.example.com",
      [
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
    ],
  ])("isWildcardDNS1123Subdomain(%j)", (value, errors) => {
    expect(isWildcardDNS1123Subdomain(value)).toEqual(errors);
  });

  it.each<[string, string[]]>([
    ["web-1", []],
    ["1web", []],
    ["web.v1", ["must not contain dots"]],
    [
      "Web",
      [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    ["a".repeat(64), ["must be no more than 63 characters"]],
  ])("isDNS1123Label(%j)", (value, expected) => {
    expect(isDNS1123Label(value)).toEqual(expected);
  });

  it("isDNS1035Label requires a leading letter", () => {
    expect(isDNS1035Label("web")).toEqual([]);
    expect(isDNS1035Label("1web")).toEqual([
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it("a generateName may end with a dash", () => {
    expect(nameIsDNSSubdomain("web-", true)).toEqual([]);
    expect(nameIsDNSSubdomain("web-", false)).toHaveLength(1);
    expect(nameIsDNSLabel("web-", true)).toEqual([]);
  });

  it("path segment names", () => {
    expect(validatePathSegmentName("..", false)).toEqual(["may not be '..'"]);
    expect(validatePathSegmentName("a/b%c", false)).toEqual(["may not contain '/'", "may not contain '%'"]);
    expect(validatePathSegmentName("..", true)).toEqual([]);
  });
});

describe("ports, keys, names, IPs", () => {
  it("port numbers and names", () => {
    expect(isValidPortNum(65535)).toEqual([]);
    expect(isValidPortNum(0)).toEqual(["must be between 1 and 65535, inclusive"]);
    expect(isValidPortName("http-alt")).toEqual([]);
    expect(isValidPortName("-Very--long-port-name")).toEqual([
      "must be no more than 15 characters",
      "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
      "must not contain consecutive hyphens",
      "must not begin or end with a hyphen",
    ]);
  });

  it("config keys", () => {
    expect(isConfigMapKey("app.properties")).toEqual([]);
    expect(isConfigMapKey("..data")).toEqual(["must not start with '..'"]);
    expect(isConfigMapKey("a/b")).toEqual([
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]);
  });

  it("env var names, percents, IPs", () => {
    expect(isEnvVarName("MY_VAR.1")).toEqual([]);
    expect(isEnvVarName(".")).toEqual(["must not be '.'"]);
    expect(isValidPercent("25%")).toEqual([]);
    expect(isValidPercent("25")).toEqual([
      "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ]);
    expect(isValidIP("10.0.0.1")).toEqual([]);
    expect(isValidIP("010.000.000.001")).toEqual([]);
    expect(isValidIP("2001:db8::1")).toEqual([]);
    expect(isValidIP("10.0.0.256")).toEqual([
      "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    ]);
  });
});
