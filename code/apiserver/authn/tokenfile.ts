/**
 * The token file — `--token-auth-file`: a CSV file of static bearer tokens, one user per line,
 * `token,user,uid,"group1,group2"`. Upstream: k8s.io/apiserver
 * pkg/authentication/token/tokenfile/tokenfile.go.
 *
 * Solves: the simplest credential there is — a shared secret the administrator writes into a
 * file and hands to a person or a script. No signature, no expiry: the token *is* the password,
 * so the whole token must match, exactly, or it is not that user.
 *
 * Invariants:
 * - the file is read as Go's encoding/csv reads it: fields separated by commas, a field in double
 *   quotes may hold commas (the groups column) and `""` for a quote; a quote inside an unquoted
 *   field is an error; blank lines are skipped; records may have any number of fields;
 * - fewer than 3 fields is an error naming the file; an empty token is skipped (upstream warns);
 *   a token listed twice: the last line wins (upstream warns);
 * - the 4th field, if present, is the groups, split on commas; later fields are ignored;
 * - a token that is not in the file is "not mine" (`null`): bearertoken.ts turns that into an
 *   error, because the request *did* present a bearer token.
 *
 * What upstream does differently: nothing here reloads the file; upstream does not either (a
 * change needs a restart), which is one reason static tokens are discouraged in production.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go (NewCSV, TokenAuthenticator.AuthenticateToken)
 * @upstream golang/go src/encoding/csv/reader.go (Reader.readRecord: quoted fields, ErrBareQuote, ErrQuote)
 * @chapter 03-api-security
 */
import { readFile } from "node:fs/promises";
import { AuthenticationError, type AuthenticatorResponse, type TokenAuthenticator } from "./authenticator.ts";
import type { UserInfo } from "./user.ts";

// #region read-csv
/**
 * encoding/csv's Reader.ReadAll with FieldsPerRecord = -1: every record of the text, or the
 * first parse error in Go's words (`parse error on line 2, column 7: bare " in non-quoted-field`).
 */
export function readCSV(text: string): string[][] | AuthenticationError {
  const records: string[][] = [];
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const startLine = i + 1;
    if ((lines[i] as string) === "") continue; // Go skips empty lines
    const fields: string[] = [];
    let line = lines[i] as string;
    let pos = 0;
    for (;;) {
      if (line[pos] !== '"') {
        // An unquoted field runs to the next comma; a quote in it is a bare quote.
        const end = line.indexOf(",", pos);
        const field = end === -1 ? line.slice(pos) : line.slice(pos, end);
        const quote = field.indexOf('"');
        if (quote !== -1) return parseError(i + 1, pos + quote + 1, 'bare " in non-quoted-field');
        fields.push(field);
        if (end === -1) break;
        pos = end + 1;
        continue;
      }
      // A quoted field: up to the closing quote, `""` is a quote, and it may span lines.
      let field = "";
      pos++;
      for (;;) {
        const q = line.indexOf('"', pos);
        if (q === -1) {
          field += `${line.slice(pos)}\n`;
          if (++i >= lines.length)
            return parseError(startLine, line.length + 1, 'extraneous or missing " in quoted-field');
          line = lines[i] as string;
          pos = 0;
          continue;
        }
        field += line.slice(pos, q);
        if (line[q + 1] === '"') {
          field += '"';
          pos = q + 2;
          continue;
        }
        pos = q + 1;
        break;
      }
      fields.push(field);
      if (pos >= line.length) break;
      if (line[pos] !== ",") return parseError(i + 1, pos + 1, 'extraneous or missing " in quoted-field');
      pos++;
      if (pos === line.length) {
        fields.push(""); // a trailing comma ends with an empty field
        break;
      }
    }
    records.push(fields);
  }
  return records;
}

function parseError(line: number, column: number, what: string): AuthenticationError {
  return new AuthenticationError(`parse error on line ${line}, column ${column}: ${what}`);
}
// #endregion read-csv

// #region new-csv
/** NewCSV: the token → user table of a token file's text; `path` names the file in errors. */
export function parseTokenFile(text: string, path: string): Map<string, UserInfo> | AuthenticationError {
  const records = readCSV(text);
  if (records instanceof AuthenticationError) return records;
  const tokens = new Map<string, UserInfo>();
  for (const record of records) {
    if (record.length < 3) {
      return new AuthenticationError(
        `token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`,
      );
    }
    const [token, name, uid, groups] = record as [string, string, string, string?];
    if (token === "") continue; // upstream: a warning, and the line is skipped
    tokens.set(token, { name, uid, groups: groups === undefined ? [] : groups.split(",") });
  }
  return tokens;
}
// #endregion new-csv

// #region token-file-authenticator
export class TokenFileAuthenticator implements TokenAuthenticator {
  constructor(private readonly tokens: ReadonlyMap<string, UserInfo>) {}

  /** Reads `--token-auth-file`; a bad file stops the server from starting. */
  static async fromFile(path: string): Promise<TokenFileAuthenticator> {
    const tokens = parseTokenFile(await readFile(path, "utf8"), path);
    if (tokens instanceof AuthenticationError) throw tokens;
    return new TokenFileAuthenticator(tokens);
  }

  /** The whole token, exactly: a prefix, a different case or extra spaces are another token. */
  async authenticateToken(token: string): Promise<AuthenticatorResponse | null> {
    const user = this.tokens.get(token);
    return user ? { user: { ...user, groups: [...user.groups] } } : null;
  }
}
// #endregion token-file-authenticator
