import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { UserInfo } from "../authn/user.ts";
import type { Attributes, Authorizer } from "../authz/authorizer.ts";
import { isStatusError } from "../errors.ts";
import { buildImpersonationRequests, impersonateRequest } from "./impersonation.ts";

/** A request with these header lines, as Node presents it (names lower-cased, repeats kept apart). */
function request(lines: [string, string][]): IncomingMessage {
  const headers: Record<string, string> = {};
  const headersDistinct: Record<string, string[]> = {};
  for (const [name, value] of lines) {
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
    headersDistinct[key] = [...(headersDistinct[key] ?? []), value];
  }
  return { headers, headersDistinct } as unknown as IncomingMessage;
}

const bob: UserInfo = { name: "bob", groups: ["support", "system:authenticated"] };

/** Allows what `allowed` says, and remembers every question. */
function recording(allowed: (a: Attributes) => boolean): Authorizer & { asked: Attributes[] } {
  const asked: Attributes[] = [];
  return {
    asked,
    async authorize(a) {
      asked.push(a);
      return allowed(a) ? { decision: "allow", reason: "" } : { decision: "noOpinion", reason: "" };
    },
  };
}

async function failure(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error("expected a Status error");
}

describe("impersonation (filters/impersonation.go)", () => {
  it("leaves the user alone without Impersonate-* headers, and asks the authorizer nothing", async () => {
    const authz = recording(() => false);
    expect(await impersonateRequest(request([["Accept", "*/*"]]), bob, authz)).toBe(bob);
    expect(authz.asked).toEqual([]);
  });

  it("asks once per attribute: the user, each group, each extra value, the uid", async () => {
    const authz = recording(() => true);
    const req = request([
      ["Impersonate-User", "jane"],
      ["Impersonate-Group", "dev"],
      ["Impersonate-Group", "qa, ops"],
      ["Impersonate-Extra-Scopes", "view"],
      ["Impersonate-Extra-Scopes", "edit"],
      ["Impersonate-Extra-example.com%2Freason", "on-call"],
      ["Impersonate-Uid", "1234"],
    ]);
    const user = await impersonateRequest(req, bob, authz);
    expect(user).toEqual({
      name: "jane",
      uid: "1234",
      // A comma inside one header is part of the group's name, as in upstream.
      groups: ["dev", "qa, ops", "system:authenticated"],
      extra: { "example.com/reason": ["on-call"], scopes: ["view", "edit"] },
    });
    expect(
      authz.asked.map((a) => [a.verb, a.apiGroup, a.resource, a.subresource, a.namespace, a.name]),
    ).toEqual([
      ["impersonate", "", "users", "", "", "jane"],
      ["impersonate", "", "groups", "", "", "dev"],
      ["impersonate", "", "groups", "", "", "qa, ops"],
      ["impersonate", "authentication.k8s.io", "userextras", "example.com/reason", "", "on-call"],
      ["impersonate", "authentication.k8s.io", "userextras", "scopes", "", "view"],
      ["impersonate", "authentication.k8s.io", "userextras", "scopes", "", "edit"],
      ["impersonate", "authentication.k8s.io", "uids", "", "", "1234"],
    ]);
    expect(authz.asked.every((a) => a.user === bob && a.isResourceRequest)).toBe(true);
    // Nothing after this gate sees the headers.
    expect(Object.keys(req.headers).filter((h) => h.startsWith("impersonate-"))).toEqual([]);
  });

  it("stops at the first attribute denied, with upstream's 403 message", async () => {
    // bob may become jane, but not add system:masters to her groups.
    const authz = recording((a) => a.resource === "users");
    const req = request([
      ["Impersonate-User", "jane"],
      ["Impersonate-Group", "system:masters"],
      ["Impersonate-Group", "dev"],
    ]);
    expect(await failure(impersonateRequest(req, bob, authz))).toEqual({
      code: 403,
      message:
        'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
    });
    expect(authz.asked).toHaveLength(2);
  });

  it("names the user in the message when the user itself is denied", async () => {
    const req = request([["Impersonate-User", "jane"]]);
    expect(
      (
        await failure(
          impersonateRequest(
            req,
            bob,
            recording(() => false),
          ),
        )
      ).message,
    ).toBe(
      'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  it("checks a service-account user as the ServiceAccount in its namespace, and gives it its groups", async () => {
    const authz = recording(() => true);
    const user = await impersonateRequest(
      request([["Impersonate-User", "system:serviceaccount:shop:web"]]),
      bob,
      authz,
    );
    expect(authz.asked.map((a) => [a.apiVersion, a.resource, a.namespace, a.name])).toEqual([
      ["v1", "serviceaccounts", "shop", "web"],
    ]);
    expect(user).toEqual({
      name: "system:serviceaccount:shop:web",
      groups: ["system:serviceaccounts", "system:serviceaccounts:shop", "system:authenticated"],
      extra: {},
    });
    const denied = await failure(
      impersonateRequest(
        request([["Impersonate-User", "system:serviceaccount:shop:web"]]),
        bob,
        recording(() => false),
      ),
    );
    expect(denied.message).toBe(
      'serviceaccounts "web" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "shop"',
    );
  });

  it("adds system:authenticated unless the groups say otherwise; system:anonymous gets system:unauthenticated", async () => {
    const allow = recording(() => true);
    const asUnauth = await impersonateRequest(
      request([
        ["Impersonate-User", "jane"],
        ["Impersonate-Group", "system:unauthenticated"],
      ]),
      bob,
      allow,
    );
    expect(asUnauth.groups).toEqual(["system:unauthenticated"]);
    const anon = await impersonateRequest(request([["Impersonate-User", "system:anonymous"]]), bob, allow);
    expect(anon.groups).toEqual(["system:unauthenticated"]);
  });

  it("refuses groups, extra or a uid without a user (400)", async () => {
    for (const line of [
      ["Impersonate-Group", "dev"],
      ["Impersonate-Extra-Scopes", "view"],
      ["Impersonate-Uid", "1234"],
    ] as [string, string][]) {
      const f = await failure(
        impersonateRequest(
          request([line]),
          bob,
          recording(() => true),
        ),
      );
      expect(f.code).toBe(400);
      expect(f.message).toMatch(/without impersonating a user$/);
    }
  });

  it("takes a user name that only looks like a service account as a plain user", () => {
    expect(
      buildImpersonationRequests(request([["Impersonate-User", "system:serviceaccount:a:b:c"]])),
    ).toEqual([{ kind: "User", name: "system:serviceaccount:a:b:c" }]);
  });
});
