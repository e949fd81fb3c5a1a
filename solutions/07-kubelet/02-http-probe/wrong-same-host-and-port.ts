// Mistake: "the same host" is compared with the port (URL.host), so a redirect to another port of
// the same address is not followed. Plausible: host and port together name a server. But upstream
// compares Hostname() only: a pod that redirects :8080/healthz to :8443/healthz is still the same
// pod, and its probe should see the final answer, not a warning.
import { type HTTPJudgment, type HTTPResponse, isRedirect } from "../../../code/kubelet/prober/probe/http.ts";

export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  const current = requested[requested.length - 1];
  const next = isRedirect(res.status) && res.location ? new URL(res.location, current) : undefined;
  if (next && next.host === requested[0].host) {
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
  return { result: "failure", output: `HTTP probe failed with statuscode: ${res.status}` };
}
