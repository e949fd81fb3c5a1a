/**
 * Warning headers — `Warning: 299 - "unknown field \"spec.foo\""`, the way the API server tells a
 * client about something it accepted but would rather not have (kubectl prints `Warning: …`).
 *
 * Solves: a warning quotes the client's own input (an unknown field's name), which may hold any
 * character: Node refuses a header value with a character beyond Latin-1 or a control character,
 * and throws — a client's typo must not become a 500 or a reset connection. Upstream sends the
 * text as UTF-8 in a quoted string (NewWarningHeader, makeQuotedString); so do we, byte for byte.
 *
 * Invariants: every value is `299 - "<text>"` with `"` and `\` escaped, control characters
 * replaced by spaces (Go's net/http does the same to newlines), the rest sent as UTF-8 bytes.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/net/http.go (NewWarningHeader, makeQuotedString)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (addStrictDecodingWarnings)
 * @chapter 02-apiserver
 */
import type { ServerResponse } from "node:http";

/** One header value: the warning, quoted as upstream quotes it, as the UTF-8 bytes Node will send. */
export function warningHeaderValue(text: string): string {
  const clean = text.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, " ").replace(/["\\]/g, (c) => `\\${c}`);
  // Node writes header strings as Latin-1: hand it the UTF-8 bytes, one per character.
  return Buffer.from(`299 - "${clean}"`, "utf8").toString("latin1");
}

/** Adds the warnings to the response (none: nothing). */
export function addWarnings(res: ServerResponse, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const previous = res.getHeader("Warning");
  const before = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
  res.setHeader("Warning", [...before, ...warnings.map(warningHeaderValue)]);
}
