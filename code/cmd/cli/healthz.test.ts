import { describe, expect, it } from "vitest";
import { handleHealth, namedCheck } from "./healthz.ts";

describe("handleHealth", () => {
  let failing = false;
  const election = namedCheck("leaderElection", () =>
    failing ? new Error("failed election to renew leadership on lease kube-scheduler") : undefined,
  );
  const paths = { "/healthz": [election], "/livez": [] };

  it("ok when every check passes; ?verbose lists them; no checks means ping", () => {
    failing = false;
    expect(handleHealth("/healthz", paths)).toEqual({ status: 200, body: "ok" });
    expect(handleHealth("/healthz?verbose", paths)).toEqual({
      status: 200,
      body: "[+]leaderElection ok\nhealthz check passed\n",
    });
    expect(handleHealth("/livez?verbose", paths)?.body).toBe("[+]ping ok\nlivez check passed\n");
    expect(handleHealth("/metrics", paths)).toBeUndefined();
  });

  it("a failing check: 500, its reason withheld from the list, given on its own path", () => {
    failing = true;
    expect(handleHealth("/healthz", paths)).toEqual({
      status: 500,
      body: "[-]leaderElection failed: reason withheld\nhealthz check failed\n",
    });
    expect(handleHealth("/healthz/leaderElection", paths)).toEqual({
      status: 500,
      body: "internal server error: failed election to renew leadership on lease kube-scheduler\n",
    });
    expect(handleHealth("/livez", paths)).toEqual({ status: 200, body: "ok" });
  });
});
