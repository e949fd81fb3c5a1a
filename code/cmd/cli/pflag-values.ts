/**
 * pflag value kinds — the Kubernetes flag types beyond strings and bools, each reading its text
 * the way component-base's (or pflag's) Set does and failing with its words: Go durations,
 * int32s, IP addresses, `k=v` maps and their `k<v` form, and the lenient ConfigurationMap.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/component-base/cli/flag/map_string_string.go.
 *
 * Solves: the kubelet (and any later command) declares `--kube-reserved` or `--node-labels` as a
 * row of its table; repetition, trimming and error text come from here, as they come from
 * component-base upstream.
 *
 * Invariants:
 * - a MapStringString's first appearance replaces the default, later ones add to it;
 *   a ConfigurationMap always adds; neither mutates the value it is given;
 * - every failure is a FlagValueError whose message is upstream's (flag.ts prints it in pflag's
 *   `invalid argument "…" for "--flag" flag: …` line).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/cli/flag/map_string_string.go (MapStringString.Set, NewLangleSeparatedMapStringString)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/cli/flag/configuration_map.go (ConfigurationMap.Set)
 * @upstream kubernetes/kubernetes pkg/util/flag/flags.go (IPVar.Set)
 * @upstream spf13/pflag int32.go (int32Value.Set: strconv.ParseInt)
 * @chapter 07-kubelet
 */
import { parseIPSloppy } from "../../api/string-validation.ts";
import { DurationError, formatDuration, parseDuration } from "./duration.ts";
import { type Flag, FlagValueError } from "./flag.ts";

// #region value-kinds
/** A Go duration; a bad one gets Go's own message (`time: invalid duration "soon"`). */
export function goDurationFlag(help: string, defaultMs: number): Flag<number> {
  return {
    help,
    default: defaultMs,
    set(text) {
      const ms = parseDuration(text);
      return ms instanceof DurationError ? new FlagValueError(ms.message) : ms;
    },
    shownDefault: formatDuration(defaultMs),
  };
}

/** pflag's Int32Var: strconv.ParseInt's words for text that is not an int32. */
export function int32Flag(help: string, defaultValue: number): Flag<number> {
  return {
    help,
    default: defaultValue,
    set(text) {
      if (!/^[+-]?\d+$/.test(text))
        return new FlagValueError(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
      const n = Number(text);
      return n < -(2 ** 31) || n >= 2 ** 31
        ? new FlagValueError(`strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`)
        : n;
    },
    shownDefault: String(defaultValue),
  };
}

/** IPVar: an IP address; empty text leaves the value as it was. */
export function ipFlag(help: string, defaultValue: string): Flag<string> {
  return {
    help,
    default: defaultValue,
    set(text, current) {
      if (text === "") return current;
      return parseIPSloppy(text)
        ? text
        : new FlagValueError(`${JSON.stringify(text)} is not a valid IP address`);
    },
    shownDefault: JSON.stringify(defaultValue),
  };
}

/**
 * MapStringString (`sep` "=") and its LangleSeparated form (`sep` "<"): `k=v,k2=v2`. The first
 * appearance replaces the default, later ones add to it; keys and values are trimmed.
 */
export function mapFlag(
  help: string,
  sep: "=" | "<",
  defaultValue: Record<string, string> = {},
): Flag<Record<string, string>> {
  return {
    help,
    default: defaultValue,
    set(text, current, first) {
      const out = first ? {} : { ...current };
      for (const pair of text.split(",")) {
        if (pair.length === 0) continue;
        const at = pair.indexOf(sep);
        if (at < 0) return new FlagValueError(`malformed pair, expect string${sep}string`);
        out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
      }
      return out;
    },
    shownDefault: Object.keys(defaultValue).length
      ? Object.entries(defaultValue)
          .map(([k, v]) => `${k}${sep}${v}`)
          .join(",")
      : undefined,
  };
}

/** ConfigurationMap (--node-labels): `k=v` pairs, a key alone means an empty value; never fails. */
export function configurationMapFlag(help: string): Flag<Record<string, string>> {
  return {
    help,
    default: {},
    set(text, current) {
      const out = { ...current };
      for (const pair of text.split(",")) {
        if (pair.length === 0) continue;
        const at = pair.indexOf("=");
        if (at < 0) out[pair.trim()] = "";
        else out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
      }
      return out;
    },
  };
}
// #endregion value-kinds
