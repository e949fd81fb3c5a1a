// Mistake: every redirect is followed, wherever it points — the browser's behaviour. Plausible:
// "a redirect means the answer is over there". But the probe runs on the node, with the node's
// network reach: a pod could point the kubelet at any address it likes (an internal service, a
// cloud metadata endpoint). Upstream follows only redirects to the probe's own host name and
// stops at any other, reporting a warning.
import { type HTTPJudgment, type HTTPResponse, isRedirect } from "../../../code/kubelet/prober/probe/http.ts";

export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  const current = requested[requested.length - 1];
  const next = isRedirect(res.status) && res.location ? new URL(res.location, current) : undefined;
  if (next) {
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
