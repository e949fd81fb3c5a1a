/**
 * Flags of the catalog's programs: `--name=value`, `--name value` and bare `--name`.
 * No upstream counterpart: a tiny parser so each image stays one readable file.
 *
 * @upstream none — the example images' own command-line handling
 * @chapter 07-kubelet
 */

/** The flags in `argv` (what follows `--`-less words are returned as `rest`). */
export function parseFlags(argv: string[]): { flags: Map<string, string>; rest: string[] } {
  const flags = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) {
      rest.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags.set(a.slice(2), argv[++i]);
    else flags.set(a.slice(2), "true");
  }
  return { flags, rest };
}

/** A numeric flag, else the environment variable `env`, else `def`. */
export function numberFlag(flags: Map<string, string>, name: string, def: number, env?: string): number {
  const raw = flags.get(name) ?? (env ? process.env[env] : undefined);
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(n) ? n : def;
}
