/**
 * Flags — a command's flag table, and its command line read against it the way the upstream
 * binary reads it: with Go's `flag` package (etcd) or with spf13/pflag (every Kubernetes component).
 *
 * Solves:
 * - every command declares its flags once, as a table (name, help, default, how the text becomes
 *   a value); parsing, `--help` and the error messages all come from that table, so a new
 *   command adds a table, not a parser;
 * - a learner types what they would type to the real binary and gets the real binary's answer:
 *   `--flag=value` and `--flag value` both work, and an unknown flag, a missing value or a bad
 *   value gets upstream's message, word for word, on one line.
 *
 * The two syntaxes differ where a learner would notice:
 *
 * | the command line | Go's flag (etcd) | pflag (kube-apiserver, kube-scheduler, …) |
 * | --- | --- | --- |
 * | `-name value` | the flag `name`: one dash or two | the shorthands `-n -a -m -e`: long names need two dashes |
 * | `-v3`, `-v=3`, `-v 3` | the flag `v3`; the flag `v` = 3; the flag `v` = 3 | the shorthand `v` = 3, all three |
 * | `--flag_name` | an unknown flag | `--flag-name` (component-base's WordSepNormalizeFunc) |
 * | the first non-flag argument | ends the flags | is set aside; flags go on after it |
 * | an unknown flag | `flag provided but not defined: -foo` | `unknown flag: --foo` |
 * | a missing value | `flag needs an argument: -name` | `flag needs an argument: --name` |
 * | a bad value | `invalid value "x" for flag -name: …` | `invalid argument "x" for "--name" flag: …` |
 * | a repeated list flag | the flag's own type decides (etcd's URL lists: the last wins) | a StringSlice appends |
 *
 * In both, a bool flag takes no separate value (`--in-memory`, `--in-memory=false`, never
 * `--in-memory false`), `--` ends the flags, and `-h`/`--help` asks for the usage.
 *
 * Invariants:
 * - parsing never prints and never exits: it returns the values or a FlagError, and the caller
 *   (cli/run.ts) prints the error and exits 2, as Go's `flag.ExitOnError` does;
 * - a FlagError's message is one line that starts with the command's name;
 * - a flag absent from the command line has its default; `given` names the flags that were set.
 *
 * What upstream does differently: a Go FlagSet prints the whole usage after the error (we point
 * to `--help` instead, so the error stays the last line on screen); cobra prints `Error: …` and
 * kube-apiserver then exits 1, not 2.
 *
 * @upstream golang/go src/flag/flag.go (FlagSet.Parse, FlagSet.parseOne, Value, boolFlag)
 * @upstream spf13/pflag flag.go (FlagSet.Parse, parseLongArg, parseSingleShortArg, FlagSet.Set)
 * @upstream spf13/pflag string_slice.go (stringSliceValue.Set)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/cli/flag/flags.go (WordSepNormalizeFunc)
 * @chapter 01-etcd-watch
 */
import { DurationError, formatDuration, parseDuration } from "./duration.ts";

/** Which library the upstream binary parses its command line with. */
export type FlagSyntax = "go" | "pflag";

/** A bad command line. The message is the whole line to print: `etcd: flag needs an argument: -name`. */
export class FlagError extends Error {
  override readonly name = "FlagError";
  constructor(command: string, problem: string) {
    super(`${command}: ${problem}`);
  }
}

/** A text that is not a value of the flag's type; `reason` says what to write instead. */
export class FlagValueError extends Error {
  override readonly name = "FlagValueError";
}

// #region flag
/** One row of the flag table: what --help says, the default, and how a text becomes a value. */
export interface Flag<T> {
  readonly help: string;
  readonly default: T;
  /**
   * Go's `flag.Value.Set`: the flag's new value from its text, or why the text is not one.
   * `current` is the value so far and `first` says whether this is the flag's first
   * appearance on the command line (a list that appends replaces its default the first time).
   */
  set(text: string, current: T, first: boolean): T | FlagValueError;
  /** Takes no separate value: `--flag` alone means true (Go's IsBoolFlag, pflag's NoOptDefVal). */
  readonly isBool?: boolean;
  /** pflag only: a one-letter alias (`-v` for `--v`). */
  readonly shorthand?: string;
  /** The default as --help shows it (`"default"`, `5m0s`); absent when it would say nothing. */
  readonly shownDefault?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a table holds flags of every value type
export type Flags = Record<string, Flag<any>>;

/** The value of every flag in a table, typed by the table: `{ name: string, "in-memory": boolean }`. */
export type FlagValues<F extends Flags> = {
  -readonly [K in keyof F]: F[K] extends Flag<infer T> ? T : never;
};
// #endregion flag

// #region flag-types
/** A string; with no default, `undefined` until it is given. */
export function stringFlag(help: string): Flag<string | undefined>;
export function stringFlag(help: string, defaultValue: string): Flag<string>;
export function stringFlag(help: string, defaultValue?: string): Flag<string | undefined> {
  return {
    help,
    default: defaultValue,
    set: (text) => text,
    shownDefault: defaultValue ? JSON.stringify(defaultValue) : undefined,
  };
}

/** strconv.ParseBool's words, which both Go's flag and pflag accept. */
const boolWords: Record<string, boolean> = {
  "1": true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  "0": false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

export function boolFlag(help: string, defaultValue = false): Flag<boolean> {
  return {
    help,
    default: defaultValue,
    isBool: true,
    set: (text) => boolWords[text] ?? new FlagValueError("parse error"),
    shownDefault: defaultValue ? "true" : undefined,
  };
}

interface Bounds {
  min?: number;
  max?: number;
  /** What to write instead, said after upstream's "invalid value …": `use a positive integer`. */
  hint: string;
}

const outside = (n: number, b: Bounds) =>
  (b.min !== undefined && n < b.min) || (b.max !== undefined && n > b.max);

/** A decimal integer (Go's strconv.ParseInt), within `bounds`. */
export function intFlag(help: string, defaultValue: number, bounds: Bounds): Flag<number> {
  return {
    help,
    default: defaultValue,
    set(text) {
      const n = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN;
      return Number.isSafeInteger(n) && !outside(n, bounds) ? n : new FlagValueError(bounds.hint);
    },
    shownDefault: String(defaultValue),
  };
}

/** A Go duration (`5m0s`), as milliseconds, within `bounds`. */
export function durationFlag(help: string, defaultMs: number, bounds: Bounds): Flag<number> {
  return {
    help,
    default: defaultMs,
    set(text) {
      const ms = parseDuration(text);
      return ms instanceof DurationError || outside(ms, bounds) ? new FlagValueError(bounds.hint) : ms;
    },
    shownDefault: formatDuration(defaultMs),
  };
}

/**
 * A comma-separated list. `repeated` says what a second `--flag` does: `append` as pflag's
 * StringSlice (`--etcd-servers=a --etcd-servers=b` is both), `replace` as etcd's URL lists.
 */
export function listFlag(
  help: string,
  defaultValue: string[],
  repeated: "append" | "replace",
): Flag<string[]> {
  return {
    help,
    default: defaultValue,
    set(text, current, first) {
      const items = text.split(",").filter((s) => s !== "");
      return repeated === "append" && !first ? [...current, ...items] : items;
    },
    shownDefault: defaultValue.length > 0 ? defaultValue.join(",") : undefined,
  };
}
// #endregion flag-types

/** A command's flags, and the syntax its upstream binary reads them in. */
export interface FlagSet<F extends Flags> {
  /** The binary's name; every error starts with it. */
  readonly name: string;
  readonly syntax: FlagSyntax;
  readonly flags: F;
}

export interface ParsedFlags<F extends Flags> {
  values: FlagValues<F>;
  /** The flags the command line set (a default is not "given"). */
  given: ReadonlySet<keyof F & string>;
  /** The arguments that are not flags, in order. */
  args: string[];
  /** `-h` or `--help` was asked for: nothing else counts. */
  help: boolean;
}

// #region parse
/** Reads `argv` (without the program name) against the flag table, in the set's syntax. */
export function parseFlags<F extends Flags>(set: FlagSet<F>, argv: string[]): ParsedFlags<F> | FlagError {
  const values = Object.fromEntries(Object.entries(set.flags).map(([n, f]) => [n, f.default]));
  const parsed: ParsedFlags<F> = { values: values as FlagValues<F>, given: new Set(), args: [], help: false };
  const given = parsed.given as Set<string>;
  const fail = (problem: string) => new FlagError(set.name, problem);
  const unknown = (problem: string) => fail(`${problem} (see ${set.name} --help)`);

  /** Sets one flag from its text; the error, in the syntax's words, if the text is no value. */
  const assign = (name: string, text: string, shown: string): FlagError | undefined => {
    const flag = set.flags[name];
    const value = flag.set(text, values[name], !given.has(name));
    if (value instanceof FlagValueError) {
      // Bools have one fix whatever the library; other types carry their own hint.
      const reason = flag.isBool ? `use --${name} or --${name}=false` : value.message;
      if (set.syntax === "pflag")
        return fail(`invalid argument ${JSON.stringify(text)} for "${shown}" flag: ${reason}`);
      return fail(
        flag.isBool
          ? `invalid boolean value ${JSON.stringify(text)} for -${name}: ${reason}`
          : `invalid value ${JSON.stringify(text)} for flag -${name}: ${reason}`,
      );
    }
    values[name] = value;
    given.add(name);
    return undefined;
  };

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.length < 2 || arg[0] !== "-") {
      // Go's flag stops at the first non-flag; pflag sets it aside and reads on.
      if (set.syntax === "go") {
        parsed.args.push(...argv.slice(i));
        return parsed;
      }
      parsed.args.push(arg);
      continue;
    }
    if (arg === "--") {
      parsed.args.push(...argv.slice(i + 1));
      return parsed;
    }
    const long = set.syntax === "go" || arg[1] === "-";
    if (long) {
      const body = arg.slice(arg[1] === "-" ? 2 : 1);
      if (body === "" || body[0] === "-" || body[0] === "=") return fail(`bad flag syntax: ${arg}`);
      const eq = body.indexOf("=");
      const written = eq < 0 ? body : body.slice(0, eq);
      const inline = eq < 0 ? undefined : body.slice(eq + 1);
      // Kubernetes components read `--etcd_servers` as `--etcd-servers` (component-base's normalizer).
      const name = set.syntax === "pflag" ? written.replaceAll("_", "-") : written;
      const flag = Object.hasOwn(set.flags, name) ? set.flags[name] : undefined;
      if (!flag) {
        if (name === "help" || (set.syntax === "go" && name === "h")) return { ...parsed, help: true };
        return unknown(
          set.syntax === "go" ? `flag provided but not defined: -${name}` : `unknown flag: --${written}`,
        );
      }
      let text = inline;
      if (text === undefined && flag.isBool) text = "true";
      if (text === undefined && i + 1 < argv.length) text = argv[++i];
      if (text === undefined) {
        return fail(`flag needs an argument: ${set.syntax === "go" ? `-${name}` : arg}`);
      }
      const shown = flag.shorthand ? `-${flag.shorthand}, --${name}` : `--${name}`;
      const err = assign(name, text, shown);
      if (err) return err;
      continue;
    }
    // pflag shorthands: `-v3`, `-v=3`, `-v 3`, and bools in a cluster (`-ab`).
    let shorts = arg.slice(1);
    while (shorts !== "") {
      const c = shorts[0];
      const name = Object.keys(set.flags).find((n) => set.flags[n].shorthand === c);
      if (name === undefined) {
        if (c === "h") return { ...parsed, help: true };
        return unknown(`unknown shorthand flag: '${c}' in -${shorts}`);
      }
      const flag = set.flags[name];
      let text: string;
      if (shorts.length > 2 && shorts[1] === "=") {
        text = shorts.slice(2);
        shorts = "";
      } else if (flag.isBool) {
        text = "true";
        shorts = shorts.slice(1);
      } else if (shorts.length > 1) {
        text = shorts.slice(1);
        shorts = "";
      } else if (i + 1 < argv.length) {
        text = argv[++i];
        shorts = "";
      } else {
        return fail(`flag needs an argument: '${c}' in -${shorts}`);
      }
      const err = assign(name, text, `-${c}, --${name}`);
      if (err) return err;
    }
  }
  return parsed;
}
// #endregion parse

/** The flag table as --help prints it: one line a flag, its default after its help. */
export function flagUsages(set: FlagSet<Flags>, extra: Record<string, string> = {}): string[] {
  const rows = Object.entries(set.flags).map(([name, flag]) => ({
    name,
    shorthand: flag.shorthand,
    help: flag.shownDefault ? `${flag.help} (default ${flag.shownDefault})` : flag.help,
  }));
  for (const [name, help] of Object.entries(extra)) {
    rows.push({ name, shorthand: set.syntax === "pflag" && name === "help" ? "h" : undefined, help });
  }
  const width = Math.max(...rows.map((r) => r.name.length)) + 2;
  // pflag lists `-v, --v` and indents the others to line up; Go's flag has no shorthands.
  const indent = set.syntax === "pflag" ? "    " : "";
  return rows.map((r) => `  ${r.shorthand ? `-${r.shorthand}, ` : indent}--${r.name.padEnd(width)}${r.help}`);
}
