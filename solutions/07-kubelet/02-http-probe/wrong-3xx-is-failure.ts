// Mistake: only 2xx is healthy — a redirect that is not followed is judged a failure. Plausible:
// "the page I asked for did not answer 200". But upstream's rule is 200–399: a redirect to another
// host (a login page, an HTTPS front door) means the server is up and answering, so it is a
// success with a warning. With this version a liveness probe on such an endpoint restarts a
// perfectly healthy container every few periods.
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
  if (res.status >= 200 && res.status < 300) return { result: "success", output: res.body };
  return { result: "failure", output: `HTTP probe failed with statuscode: ${res.status}` };
}
