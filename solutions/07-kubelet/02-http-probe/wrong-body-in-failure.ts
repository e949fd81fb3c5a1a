// Mistake: the failure text carries the response body, "so the user sees why". Plausible — the
// body often says what broke. But the text becomes an event anyone who may read events sees, and
// a page's content can hold what it should not (upstream issue 99425): upstream says only
// "HTTP probe failed with statuscode: N" and keeps the body to its own debug log.
import { type HTTPJudgment, type HTTPResponse, isRedirect } from "../../../code/kubelet/prober/probe/http.ts";

export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  const current = requested[requested.length - 1];
  const next = isRedirect(res.status) && res.location ? new URL(res.location, current) : undefined;
  if (next && next.hostname === requested[0].hostname) {
    if (requested.length >= 10) {
      return { result: "failure", output: `Get ${JSON.stringify(next.href)}: stopped after 10 redirects` };
    }
    return { follow: next };
  }
  if (res.status >= 200 && res.status < 400) {
    if (res.status >= 300) {
      return { result: "warning", output: `Probe terminated redirects, Response body: ${res.body}` };
    }
    return { result: "success", output: res.body };
  }
  return { result: "failure", output: `HTTP probe failed with statuscode: ${res.status}, body: ${res.body}` };
}
