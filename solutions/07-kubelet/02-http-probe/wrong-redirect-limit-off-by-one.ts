// Mistake: the limit counts redirects followed, and stops only when more than 10 requests were
// made — `requested.length > 10`. Plausible: "at most 10 redirects" read as "10 redirects are
// fine, the 11th is not". But Go's client (which upstream keeps) checks the requests made so far:
// with 10 of them behind it, the next redirect is refused — a loop costs the pod 10 requests per
// probe, not 11.
import { type HTTPJudgment, type HTTPResponse, isRedirect } from "../../../code/kubelet/prober/probe/http.ts";

export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  const current = requested[requested.length - 1];
  const next = isRedirect(res.status) && res.location ? new URL(res.location, current) : undefined;
  if (next && next.hostname === requested[0].hostname) {
    if (requested.length > 10) {
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
  return { result: "failure", output: `HTTP probe failed with statuscode: ${res.status}` };
}
