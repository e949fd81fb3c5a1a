/**
 * Time decoding — whether a string is an RFC 3339 time as Go's time.Parse reads it, and if not,
 * the error Go gives (`parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse
 * "yesterday" as "2006"`).
 *
 * Solves: metav1.Time and MicroTime fields (`creationTimestamp`, a Lease's `renewTime`, a
 * condition's `lastTransitionTime`) are parsed while decoding; a time that does not parse makes
 * the whole request a 400, in Go's words.
 *
 * Invariants: the layout is walked element by element as Go's parse does: the first element that
 * does not match names itself and what was left of the value; a number out of its range says so.
 *
 * What upstream does differently: Go also knows leap years for `day out of range`; so do we, but we
 * do not reproduce Go's checks of time zones beyond `Z` and `±hh:mm`.
 *
 * @upstream golang/go src/time/format.go (Parse, ParseError, RFC3339)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time.go (Time.UnmarshalJSON)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/micro_time.go (RFC3339Micro)
 * @chapter 02-apiserver
 */

export const rfc3339Layout = "2006-01-02T15:04:05Z07:00";
export const rfc3339MicroLayout = "2006-01-02T15:04:05.000000Z07:00";

type Element =
  | { literal: string }
  | { std: string; digits: number; fixed: boolean; max: number; name: string };

function elements(layout: string): Element[] {
  const micro = layout === rfc3339MicroLayout;
  const els: Element[] = [
    { std: "2006", digits: 4, fixed: true, max: 9999, name: "year" },
    { literal: "-" },
    { std: "01", digits: 2, fixed: true, max: 12, name: "month" },
    { literal: "-" },
    { std: "02", digits: 2, fixed: true, max: 31, name: "day" },
    { literal: "T" },
    { std: "15", digits: 2, fixed: false, max: 23, name: "hour" },
    { literal: ":" },
    { std: "04", digits: 2, fixed: true, max: 59, name: "minute" },
    { literal: ":" },
    { std: "05", digits: 2, fixed: true, max: 59, name: "second" },
  ];
  if (micro) els.push({ std: ".000000", digits: 6, fixed: true, max: 999999, name: "fraction" });
  return els;
}

const quote = (s: string) => JSON.stringify(s);

// #region parse-time
/** Go's error for time.Parse(layout, value), or undefined when it parses. */
export function parseTimeError(value: string, layout: string): string | undefined {
  const bad = (rest: string, elem: string) =>
    `parsing time ${quote(value)} as ${quote(layout)}: cannot parse ${quote(rest)} as ${quote(elem)}`;
  const range = (name: string) => `parsing time ${quote(value)}: ${name} out of range`;
  let rest = value;
  const got: Record<string, number> = {};
  for (const el of elements(layout)) {
    if ("literal" in el) {
      if (!rest.startsWith(el.literal)) return bad(rest, el.literal);
      rest = rest.slice(el.literal.length);
      continue;
    }
    let text: string;
    if (el.std === ".000000") {
      const m = /^\.([0-9]{6})/.exec(rest);
      if (!m) return bad(rest, el.std);
      text = m[1];
      rest = rest.slice(7);
    } else {
      const m = (el.fixed ? new RegExp(`^[0-9]{${el.digits}}`) : /^[0-9]{1,2}/).exec(rest);
      if (!m) return bad(rest, el.std);
      text = m[0];
      rest = rest.slice(text.length);
    }
    const n = Number(text);
    if ((el.name === "month" && n < 1) || n > el.max) return range(el.name);
    got[el.name] = n;
    // Go reads a fraction of a second after the seconds even when the layout has none.
    if (el.name === "second" && layout === rfc3339Layout) {
      const frac = /^[.,][0-9]+/.exec(rest);
      if (frac) rest = rest.slice(frac[0].length);
    }
  }
  // The zone: Z, or ±hh:mm.
  if (rest.startsWith("Z")) rest = rest.slice(1);
  else {
    const m = /^[+-]([0-9]{2}):([0-9]{2})/.exec(rest);
    if (!m) return bad(rest, "Z07:00");
    if (Number(m[1]) > 24 || Number(m[2]) > 60) return range("time zone offset");
    rest = rest.slice(6);
  }
  if (rest !== "") return `parsing time ${quote(value)}: extra text: ${quote(rest)}`;
  const daysIn = new Date(Date.UTC(got.year, got.month, 0)).getUTCDate();
  if (got.day < 1 || got.day > daysIn) return range("day");
  return undefined;
}
// #endregion parse-time
