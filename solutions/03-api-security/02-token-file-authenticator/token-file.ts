/**
 * Solution: the token-file authenticator — upstream's CSV token file, and a bearer token judged
 * against it. The steps are named (`reference`) so that each recorded mistake swaps one.
 */
import type { AuthenticatorResponse } from "../../../code/apiserver/authn/authenticator.ts";
import type { UserInfo } from "../../../code/apiserver/authn/user.ts";

export interface Steps {
  /** The CSV records of the file (encoding/csv: quotes, `""`, blank lines skipped). */
  records(text: string): string[][];
  /** The 4th column as groups. */
  groups(field: string | undefined): string[];
  /** The token of an Authorization header, or undefined when it presents none. */
  bearer(header: string | undefined): string | undefined;
  /** The user of a token, or undefined. */
  lookup(tokens: ReadonlyMap<string, UserInfo>, token: string): UserInfo | undefined;
  /** The user as the file authenticator hands it on. */
  user(found: UserInfo): UserInfo;
  /** A bearer token that is not in the file. */
  unknown(): AuthenticatorResponse | null;
}

function records(text: string): string[][] {
  const out: string[][] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let inQuotes = false;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === "" && !quoted)) out.push(fields);
    fields = [];
    field = "";
    quoted = false;
  };
  const s = text.replace(/\r\n/g, "\n");
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (inQuotes) {
      if (c === '"' && s[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') inQuotes = false;
      else field += c;
    } else if (c === '"') {
      if (field !== "") throw new Error(`bare " in non-quoted-field`);
      inQuotes = true;
      quoted = true;
    } else if (c === ",") {
      fields.push(field);
      field = "";
      quoted = false;
    } else if (c === "\n") endRecord();
    else field += c;
  }
  if (inQuotes) throw new Error(`extraneous or missing " in quoted-field`);
  if (field !== "" || fields.length > 0 || quoted) endRecord();
  return out;
}

export const reference: Steps = {
  records,
  groups: (field) => (field === undefined ? [] : field.split(",")),
  bearer(header) {
    const parts = (header ?? "").trim().split(" ");
    if (parts.length < 2 || (parts[0] as string).toLowerCase() !== "bearer") return undefined;
    return parts[1] === "" ? undefined : parts[1];
  },
  lookup: (tokens, token) => tokens.get(token),
  user: (found) => ({ ...found, groups: [...found.groups] }),
  unknown() {
    throw new Error("invalid bearer token");
  },
};

export function tokenFileWith(steps: Steps) {
  return {
    parseTokenFile(text: string): Map<string, UserInfo> {
      const tokens = new Map<string, UserInfo>();
      for (const record of steps.records(text)) {
        if (record.length < 3) {
          throw new Error(
            `token file must have at least 3 columns (token, user name, user uid), found ${record.length}`,
          );
        }
        const [token, name, uid, groups] = record as [string, string, string, string?];
        if (token === "") continue;
        tokens.set(token, { name, uid, groups: steps.groups(groups) });
      }
      return tokens;
    },
    authenticateBearer(
      header: string | undefined,
      tokens: ReadonlyMap<string, UserInfo>,
    ): AuthenticatorResponse | null {
      const token = steps.bearer(header);
      if (token === undefined) return null;
      const found = steps.lookup(tokens, token);
      return found ? { user: steps.user(found) } : steps.unknown();
    },
  };
}

export const { parseTokenFile, authenticateBearer } = tokenFileWith(reference);
