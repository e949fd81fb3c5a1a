/**
 * The JSON syntax tree — a request body read as Go's encoding/json scanner reads it, before any
 * type is applied: every object keeps its keys in order (duplicates too), every number keeps the
 * text the client wrote, and nesting deeper than Go's limit is refused.
 *
 * Solves:
 * - `JSON.parse` forgets what typed decoding needs: `{"name":"a","name":"b"}` becomes one key (a
 *   strict decoder must report `duplicate field "name"`), `30.0` becomes `30` (Go refuses it for
 *   an int64: `cannot unmarshal number 30.0`), `9007199254740993` loses its last digit;
 * - a body of 100,000 nested `[` parses, and then overflows the stack of whatever walks it
 *   recursively (`Maximum call stack size exceeded`, a 500): Go's scanner stops at depth 10,000
 *   with `exceeded max depth`, so must we — before anything recursive runs;
 * - a syntax error reads as Go's: `invalid character 'x' looking for beginning of value`,
 *   `unexpected end of JSON input`, so the 400 a client gets says what upstream's says.
 *
 * Invariants:
 * - the parser never recurses (an explicit stack), so no input can overflow the JS stack here;
 * - a returned tree is valid JSON of depth ≤ maxNestingDepth; anything else throws JSONSyntaxError;
 * - toValue gives exactly what JSON.parse would (last duplicate wins), also without recursion.
 *
 * What upstream does differently: Go scans bytes and replaces invalid UTF-8 in strings with
 * U+FFFD; we scan the body after Node's UTF-8 decoding, which does the same replacement.
 *
 * @upstream kubernetes-sigs/json internal/golang/encoding/json/scanner.go (scanner, maxNestingDepth, SyntaxError, quoteChar)
 * @chapter 02-apiserver
 */

export type JSONNode =
  | { kind: "object"; entries: [string, JSONNode][] }
  | { kind: "array"; items: JSONNode[] }
  | { kind: "string"; value: string }
  | { kind: "number"; text: string }
  | { kind: "bool"; value: boolean }
  | { kind: "null" };

/** Go's encoding/json nesting limit (scanner.go): deeper input is a syntax error. */
export const maxNestingDepth = 10000;

/** A body that is not JSON, with Go's message (`invalid character '}' after object key`). */
export class JSONSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = "JSONSyntaxError";
  }
}

/** Go's quoteChar: the character as a Go rune literal, `'x'`, `'\n'`, `'"'`, `'\''`. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  const quoted = JSON.stringify(c);
  return `'${quoted.slice(1, -1)}'`;
}

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r";
const isDigit = (c: string) => c >= "0" && c <= "9";
const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c);

interface Frame {
  node: { kind: "object"; entries: [string, JSONNode][] } | { kind: "array"; items: JSONNode[] };
  key?: string;
}

// #region parse
/** Parses a whole body as one JSON value, as Go's checkValid + decode do. */
export function parseJSONTree(text: string): JSONNode {
  let i = 0;
  const n = text.length;
  const stack: Frame[] = [];
  const fail = (what: string): never => {
    if (i >= n) throw new JSONSyntaxError("unexpected end of JSON input", i);
    throw new JSONSyntaxError(`invalid character ${quoteChar(text[i])} ${what}`, i);
  };
  const skipSpace = () => {
    while (i < n && isSpace(text[i])) i++;
  };

  const readString = (): string => {
    i++; // the opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= n) fail("in string literal");
      const c = text[i];
      if (c === '"') {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < " ") fail("in string literal");
      if (c !== "\\") {
        i++;
        continue;
      }
      out += text.slice(start, i);
      i++;
      if (i >= n) fail("in string escape code");
      const e = text[i];
      const simple: Record<string, string> = {
        '"': '"',
        "\\": "\\",
        "/": "/",
        b: "\b",
        f: "\f",
        n: "\n",
        r: "\r",
        t: "\t",
      };
      if (e in simple) {
        out += simple[e];
        i++;
      } else if (e === "u") {
        i++;
        for (let k = 0; k < 4; k++) {
          if (i + k >= n) {
            i += k;
            fail("in \\u hexadecimal character escape");
          }
          if (!isHex(text[i + k])) {
            i += k;
            fail("in \\u hexadecimal character escape");
          }
        }
        out += String.fromCharCode(Number.parseInt(text.slice(i, i + 4), 16));
        i += 4;
      } else fail("in string escape code");
      start = i;
    }
  };

  const readNumber = (): string => {
    const start = i;
    if (text[i] === "-") {
      i++;
      if (i >= n || !isDigit(text[i])) fail("in numeric literal");
    }
    if (text[i] === "0") i++;
    else while (i < n && isDigit(text[i])) i++;
    if (text[i] === ".") {
      i++;
      if (i >= n || !isDigit(text[i])) fail("after decimal point in numeric literal");
      while (i < n && isDigit(text[i])) i++;
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (i >= n || !isDigit(text[i])) fail("in exponent of numeric literal");
      while (i < n && isDigit(text[i])) i++;
    }
    return text.slice(start, i);
  };

  const readLiteral = (word: string) => {
    for (let k = 0; k < word.length; k++) {
      if (text[i] !== word[k]) fail(`in literal ${word} (expecting ${quoteChar(word[k])})`);
      i++;
    }
  };

  /** A scalar, or a new container pushed on the stack (returns undefined then). */
  const readValue = (): JSONNode | undefined => {
    skipSpace();
    if (i >= n) fail("");
    const c = text[i];
    if (c === "{" || c === "[") {
      if (stack.length >= maxNestingDepth) throw new JSONSyntaxError("exceeded max depth", i);
      i++;
      stack.push({ node: c === "{" ? { kind: "object", entries: [] } : { kind: "array", items: [] } });
      return undefined;
    }
    if (c === '"') return { kind: "string", value: readString() };
    if (c === "-" || isDigit(c)) return { kind: "number", text: readNumber() };
    if (c === "t") {
      readLiteral("true");
      return { kind: "bool", value: true };
    }
    if (c === "f") {
      readLiteral("false");
      return { kind: "bool", value: false };
    }
    if (c === "n") {
      readLiteral("null");
      return { kind: "null" };
    }
    return fail("looking for beginning of value");
  };

  /** Reads `"key" :` of an object into its frame. */
  const readKey = (frame: Frame) => {
    skipSpace();
    if (text[i] !== '"') fail("looking for beginning of object key string");
    frame.key = readString();
    skipSpace();
    if (text[i] !== ":") fail("after object key");
    i++;
  };

  // One loop for every level: `value` is undefined right after a container opened, else it is
  // the value just read, to attach to the container it belongs to.
  let value: JSONNode | undefined = readValue();
  for (;;) {
    if (value === undefined) {
      const frame = stack[stack.length - 1];
      skipSpace();
      const close = frame.node.kind === "array" ? "]" : "}";
      if (text[i] === close) {
        i++;
        value = (stack.pop() as Frame).node;
        continue;
      }
      if (frame.node.kind === "object") readKey(frame);
      value = readValue();
      continue;
    }
    if (stack.length === 0) break;
    const frame = stack[stack.length - 1];
    if (frame.node.kind === "array") frame.node.items.push(value);
    else frame.node.entries.push([frame.key as string, value]);
    frame.key = undefined;
    skipSpace();
    const close = frame.node.kind === "array" ? "]" : "}";
    if (text[i] === close) {
      i++;
      value = (stack.pop() as Frame).node;
      continue;
    }
    if (text[i] !== ",")
      fail(frame.node.kind === "array" ? "after array element" : "after object key:value pair");
    i++;
    if (frame.node.kind === "object") readKey(frame);
    value = readValue();
  }
  skipSpace();
  if (i < n) fail("after top-level value");
  return value;
}
// #endregion parse

/** The node as a plain JS value, as JSON.parse would give it; iterative, so any depth is safe. */
export function toValue(root: JSONNode): unknown {
  const scalar = (node: JSONNode): unknown => {
    switch (node.kind) {
      case "string":
        return node.value;
      case "number":
        return Number(node.text);
      case "bool":
        return node.value;
      case "null":
        return null;
      default:
        return node.kind === "array" ? [] : {};
    }
  };
  const out = scalar(root);
  const work: [JSONNode, unknown][] = [[root, out]];
  while (work.length > 0) {
    const [node, target] = work.pop() as [JSONNode, unknown];
    if (node.kind === "array") {
      const list = target as unknown[];
      for (const item of node.items) {
        const v = scalar(item);
        list.push(v);
        if (item.kind === "array" || item.kind === "object") work.push([item, v]);
      }
    } else if (node.kind === "object") {
      const map = target as Record<string, unknown>;
      for (const [k, item] of node.entries) {
        const v = scalar(item);
        // defineProperty: a key "__proto__" is data, as JSON.parse keeps it.
        Object.defineProperty(map, k, { value: v, enumerable: true, writable: true, configurable: true });
        if (item.kind === "array" || item.kind === "object") work.push([item, v]);
      }
    }
  }
  return out;
}

/** Go's name for the JSON kind of a value in an UnmarshalTypeError: `string`, `number`, `object`…. */
export function kindWord(node: JSONNode): string {
  return node.kind;
}

/** The tree of a JS value (a patched object): numbers keep JS's text for them. Iterative. */
export function fromValue(root: unknown): JSONNode {
  const leaf = (v: unknown): JSONNode => {
    if (v === null || v === undefined) return { kind: "null" };
    if (typeof v === "string") return { kind: "string", value: v };
    if (typeof v === "number") return { kind: "number", text: String(v) };
    if (typeof v === "boolean") return { kind: "bool", value: v };
    return Array.isArray(v) ? { kind: "array", items: [] } : { kind: "object", entries: [] };
  };
  const out = leaf(root);
  const work: [unknown, JSONNode][] = [[root, out]];
  while (work.length > 0) {
    const [v, node] = work.pop() as [unknown, JSONNode];
    if (node.kind === "array") {
      for (const item of v as unknown[]) {
        const child = leaf(item);
        node.items.push(child);
        work.push([item, child]);
      }
    } else if (node.kind === "object") {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (item === undefined) continue;
        const child = leaf(item);
        node.entries.push([k, child]);
        work.push([item, child]);
      }
    }
  }
  return out;
}

/**
 * The duplicate keys of an untyped document, as sigs.k8s.io/json's UnmarshalStrict into a
 * map[string]interface{} names them (`duplicate field "spec.replicas"`, `[0].op`). Iterative.
 */
export function duplicateFields(root: JSONNode): string[] {
  const out: string[] = [];
  const work: [JSONNode, string][] = [[root, ""]];
  while (work.length > 0 && out.length < 100) {
    const [node, path] = work.pop() as [JSONNode, string];
    // Children go on the stack last-first, so the walk (and the errors) follow document order.
    const children: [JSONNode, string][] = [];
    if (node.kind === "array") {
      node.items.forEach((item, i) => {
        children.push([item, `${path}[${i}]`]);
      });
    } else if (node.kind === "object") {
      const seen = new Set<string>();
      for (const [k, item] of node.entries) {
        const p = path ? `${path}.${k}` : k;
        if (seen.has(k)) out.push(`duplicate field ${JSON.stringify(p)}`);
        seen.add(k);
        children.push([item, p]);
      }
    }
    for (let i = children.length - 1; i >= 0; i--) work.push(children[i]);
  }
  return out;
}
