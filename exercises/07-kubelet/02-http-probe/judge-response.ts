/**
 * Exercise: the HTTP probe's judgment — one response in; out, either the next URL to request (a
 * redirect to follow) or the probe's outcome. README.md has the rules.
 *
 * The test plugs your function into the course's real Prober (code/kubelet/prober/prober.ts),
 * which probes real HTTP servers on this machine: the GETs, the timeout and the 10 KiB body limit
 * are done for you (doHTTPProbe in code/kubelet/prober/probe/http.ts).
 */
import { type HTTPJudgment, type HTTPResponse, isRedirect } from "../../../code/kubelet/prober/probe/http.ts";

export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  throw new Error(
    `TODO: judgeHTTPResponse(${res.status}${isRedirect(res.status) ? ` → ${res.location}` : ""}, after ${requested.length} request(s) starting at ${requested[0]?.href})`,
  );
}
