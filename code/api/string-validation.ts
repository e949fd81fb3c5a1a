/**
 * String checks — is this a DNS label, a port name, a config key, an IP? — each returning
 * upstream's list of problems (empty when the value is fine).
 * Upstream: apimachinery's pkg/util/validation/validation.go.
 *
 * Solves:
 * - an object's names end up in DNS (`<service>.<namespace>.svc`), in URLs and in file names
 *   (a ConfigMap key becomes a file in a volume), so each must fit the stricter of those rules;
 * - kubectl users read these messages, so each must be upstream's word for word, regex and
 *   examples included.
 *
 * Invariants:
 * - lengths are counted in bytes (Go's `len`), not UTF-16 code units;
 * - a check returns every problem it finds, in upstream's order; the caller turns each into a
 *   field error on the field it is checking.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain, IsWildcardDNS1123Subdomain, IsDNS1123Label, IsDNS1035Label, IsValidPortNum, IsInRange, IsValidPortName, IsConfigMapKey, IsEnvVarName, IsHTTPHeaderName, IsValidPercent, IsValidIP, MaxLenError, RegexError, InclusiveRangeError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/validation/generic.go (NameIsDNSSubdomain, NameIsDNSLabel, NameIsDNS1035Label, maskTrailingDash)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/validation/path/name.go (IsValidPathSegmentName, ValidatePathSegmentName)
 * @chapter 02-apiserver
 */

import { isIPv6 } from "node:net";

/** Upstream counts bytes (Go's len), not UTF-16 code units. */
function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** RegexError: each example is followed by ", " and they are joined by " or " — hence the double spaces. */
export function regexError(message: string, regex: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${regex}')`;
  const shown = examples.map((example) => `'${example}', `).join(" or ");
  return `${message} (e.g. ${shown}regex used for validation is '${regex}')`;
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

// #region dns-names
const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

/** IsDNS1123Label: a namespace, a container name, a port name in a Service — one DNS label. */
export function isDNS1123Label(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLenError(63));
  if (!new RegExp(`^${DNS1123_LABEL_FMT}$`).test(value)) {
    // A valid subdomain that is not a label has dots: say exactly that instead of the regex.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errors.push("must not contain dots");
    else errors.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"));
  }
  return errors;
}

/** IsDNS1123Subdomain: most object names, and the prefix of a label key such as `app.kubernetes.io`. */
export function isDNS1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 253) errors.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errors.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
  }
  return errors;
}

const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const WILDCARD_DNS1123_SUBDOMAIN_MSG =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

/** IsWildcardDNS1123Subdomain: `*.` and a subdomain — a certificate SAN such as `*.example.com`. */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 253) errors.push(maxLenError(253));
  if (!new RegExp(`^${WILDCARD_DNS1123_SUBDOMAIN_FMT}$`).test(value)) {
    errors.push(regexError(WILDCARD_DNS1123_SUBDOMAIN_MSG, WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com"));
  }
  return errors;
}

/** IsDNS1035Label: a Service name — a DNS label that must start with a letter. */
export function isDNS1035Label(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLenError(63));
  if (!new RegExp(`^${DNS1035_LABEL_FMT}$`).test(value)) {
    errors.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"));
  }
  return errors;
}

/** A name check: `prefix` is true for a generateName, which may end in '-' (a suffix follows). */
export type ValidateNameFunc = (name: string, prefix: boolean) => string[];

/** A generateName like `web-` becomes `web-x7k2q`; check it as if its trailing dash were a letter. */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: ValidateNameFunc = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: ValidateNameFunc = (name, prefix) =>
  isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: ValidateNameFunc = (name, prefix) =>
  isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/**
 * ValidatePathSegmentName: the weakest name rule, which every object name must pass because it
 * becomes one segment of a URL (`/api/v1/namespaces/default/pods/<name>`).
 */
export const validatePathSegmentName: ValidateNameFunc = (name, prefix) => {
  if (!prefix) {
    for (const illegal of [".", ".."]) if (name === illegal) return [`may not be '${illegal}'`];
  }
  const errors: string[] = [];
  for (const illegal of ["/", "%"]) if (name.includes(illegal)) errors.push(`may not contain '${illegal}'`);
  return errors;
};
// #endregion dns-names

// #region label-validation
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX_LENGTH = 63;
const qualifiedNameRegexp = new RegExp(`^${QUALIFIED_NAME_FMT}$`);

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX_LENGTH = 63;
const labelValueRegexp = new RegExp(`^${LABEL_VALUE_FMT}$`);

/**
 * IsQualifiedName: what a label key must look like — `name` or `prefix/name`, where the prefix
 * is a DNS subdomain and the name is at most 63 characters of `[-A-Za-z0-9_.]` that starts and
 * ends alphanumeric. Returns every problem found (none: the key is valid).
 */
export function isQualifiedName(value: string): string[] {
  const parts = value.split("/");
  if (parts.length > 2) {
    // More than one '/': upstream does not look further and describes the whole format instead.
    return [
      "a qualified name " +
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc") +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  const errors: string[] = [];
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix === "") errors.push("prefix part must be non-empty");
    else errors.push(...isDNS1123Subdomain(prefix).map((message) => `prefix part ${message}`));
  }
  if (name === "") errors.push("name part must be non-empty");
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errors.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  }
  if (!qualifiedNameRegexp.test(name)) {
    errors.push(
      `name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")}`,
    );
  }
  return errors;
}

/** IsValidLabelValue: empty, or up to 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errors.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRegexp.test(value)) {
    errors.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  }
  return errors;
}
// #endregion label-validation

// #region ports
export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

export function isInRange(value: number, min: number, max: number): string[] {
  return value >= min && value <= max ? [] : [inclusiveRangeError(min, max)];
}

/** IsValidPortName: an IANA service name — at most 15 characters, a letter somewhere, no `--`. */
export function isValidPortName(port: string): string[] {
  const errors: string[] = [];
  if (byteLength(port) > 15) errors.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port))
    errors.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(port)) errors.push("must contain at least one letter (a-z)");
  if (port.includes("--")) errors.push("must not contain consecutive hyphens");
  if (port.length > 0 && (port.startsWith("-") || port.endsWith("-"))) {
    errors.push("must not begin or end with a hyphen");
  }
  return errors;
}
// #endregion ports

// #region keys-and-names
function hasChDirPrefix(value: string): string[] {
  if (value === ".") return ["must not be '.'"];
  if (value === "..") return ["must not be '..'"];
  if (value.startsWith("..")) return ["must not start with '..'"];
  return [];
}

const CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+";

/** IsConfigMapKey: a ConfigMap or Secret key, which may become a file name in a volume. */
export function isConfigMapKey(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 253) errors.push(maxLenError(253));
  if (!new RegExp(`^${CONFIG_MAP_KEY_FMT}$`).test(value)) {
    errors.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_MAP_KEY_FMT,
        "key.name",
        "KEY_NAME",
        "key-name",
      ),
    );
  }
  errors.push(...hasChDirPrefix(value));
  return errors;
}

const ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*";

export function isEnvVarName(value: string): string[] {
  const errors: string[] = [];
  if (!new RegExp(`^${ENV_VAR_NAME_FMT}$`).test(value)) {
    errors.push(
      regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        ENV_VAR_NAME_FMT,
        "my.env-name",
        "MY_ENV.NAME",
        "MyEnvName1",
      ),
    );
  }
  errors.push(...hasChDirPrefix(value));
  return errors;
}

export function isHTTPHeaderName(value: string): string[] {
  return /^[-A-Za-z0-9]+$/.test(value)
    ? []
    : [
        regexError(
          "a valid HTTP header must consist of alphanumeric characters or '-'",
          "[-A-Za-z0-9]+",
          "X-Header-Name",
        ),
      ];
}

export function isValidPercent(percent: string): string[] {
  return /^[0-9]+%$/.test(percent)
    ? []
    : [
        regexError(
          "a valid percent string must be a numeric string followed by an ending '%'",
          "[0-9]+%",
          "1%",
          "93%",
        ),
      ];
}
// #endregion keys-and-names

// #region ip
/** netutils.ParseIPSloppy: dotted IPv4 (leading zeros tolerated, as Go 1.16 did) or IPv6. */
export function parseIPSloppy(value: string): { family: 4 | 6; bytes: number[] } | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  if (v4) {
    const bytes = v4.slice(1).map(Number);
    return bytes.every((b) => b <= 255) ? { family: 4, bytes } : undefined;
  }
  if (isIPv6(value)) return { family: 6, bytes: [] };
  return undefined;
}

/** IsValidIP: the message for a field that must hold an IP address. */
export function isValidIP(value: string): string[] {
  return parseIPSloppy(value) ? [] : ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"];
}
// #endregion ip
