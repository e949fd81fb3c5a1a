/**
 * Solution: the HTTP probe's judgment.
 */
import { type HTTPJudgment, type HTTPResponse, isRedirect } from "../../../code/kubelet/prober/probe/http.ts";

export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  const current = requested[requested.length - 1];
  // A Location may be relative: it is resolved against the URL that answered.
  const next = isRedirect(res.status) && res.location ? new URL(res.location, current) : undefined;
  // Redirects are followed only on the probe's own host name (any port): the probe runs with the
  // node's network reach, and must not be sent anywhere a pod likes.
  if (next && next.hostname === requested[0].hostname) {
    if (requested.length >= 10) {
      return { result: "failure", output: `Get ${JSON.stringify(next.href)}: stopped after 10 redirects` };
    }
    return { follow: next };
  }
  if (res.status >= 200 && res.status < 400) {
    // A 3xx not followed: logically a success, with a warning that the redirects were cut short.
    if (res.status >= 300) {
      return { result: "warning", output: `Probe terminated redirects, Response body: ${res.body}` };
    }
    return { result: "success", output: res.body };
  }
  // The status only, never the body: a page's content must not end up in an event.
  return { result: "failure", output: `HTTP probe failed with statuscode: ${res.status}` };
}
