import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readDeleteOptions } from "./delete.ts";
import type { RequestScope } from "./rest.ts";

/** Just what readDeleteOptions reads: the query and the request body. */
function scopeOf(query: string, body?: unknown): RequestScope {
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
  const req = Object.assign(Readable.from(bytes.length ? [bytes] : []), {
    headers: { "content-length": String(bytes.length) },
  }) as unknown as IncomingMessage;
  return { req, query: new URLSearchParams(query) } as unknown as RequestScope;
}

describe("readDeleteOptions", () => {
  it("reads the query when there is no body (curl's DELETE …?gracePeriodSeconds=0)", async () => {
    const options = await readDeleteOptions(scopeOf("gracePeriodSeconds=0&propagationPolicy=Foreground"));
    expect(options).toEqual({ gracePeriodSeconds: 0, propagationPolicy: "Foreground" });
  });

  it("reads only the body when there is one: query parameters are not mixed in, as upstream", async () => {
    const options = await readDeleteOptions(
      scopeOf("gracePeriodSeconds=0&dryRun=All", {
        apiVersion: "v1",
        kind: "DeleteOptions",
        propagationPolicy: "Background",
      }),
    );
    expect(options).toEqual({ propagationPolicy: "Background" });
  });

  it("validates whichever it read", async () => {
    await expect(readDeleteOptions(scopeOf("propagationPolicy=Sideways"))).rejects.toMatchObject({
      code: 422,
    });
    await expect(
      readDeleteOptions(scopeOf("", { propagationPolicy: "Orphan", orphanDependents: true })),
    ).rejects.toMatchObject({ code: 422 });
  });

  it("decodes a boolean in the query as upstream's parameter codec: only 0 and false are false", async () => {
    for (const [value, want] of [
      ["1", true],
      ["true", true],
      ["yes", true],
      ["", true],
      ["0", false],
      ["FALSE", false],
    ] as const) {
      const options = await readDeleteOptions(scopeOf(`orphanDependents=${value}`));
      expect(options, `orphanDependents=${value}`).toEqual({ orphanDependents: want });
    }
  });
});
