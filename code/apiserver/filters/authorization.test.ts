import { describe, expect, it } from "vitest";
import { newRequestInfo } from "../request-info.ts";
import { authorizerAttributes } from "./authorization.ts";

const user = { name: "system:node:node-a", groups: ["system:nodes"] };

function attrsFor(method: string, url: string) {
  return authorizerAttributes(user, newRequestInfo(method, url), new URL(url, "http://x").searchParams);
}

describe("authorizer attributes of a collection read", () => {
  it("name the one object a metadata.name field selector pins, as RequestInfoFactory does", () => {
    const a = attrsFor(
      "GET",
      "/api/v1/namespaces/default/secrets?watch=true&fieldSelector=metadata.name%3Ddb",
    );
    expect([a.verb, a.name, a.fieldSelector]).toEqual(["watch", "db", "metadata.name=db"]);
    expect(
      attrsFor("GET", "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%21%3Ddb").name,
    ).toBe("");
    expect(
      attrsFor("DELETE", "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Ddb").name,
    ).toBe("");
  });

  it("carry the raw selectors of list, watch and deletecollection, but not of the legacy /watch/ paths", () => {
    const list = attrsFor("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a&labelSelector=app%3Dweb");
    expect([list.fieldSelector, list.labelSelector]).toEqual(["spec.nodeName=node-a", "app=web"]);
    const legacy = attrsFor("GET", "/api/v1/watch/pods?fieldSelector=spec.nodeName%3Dnode-a");
    expect([legacy.verb, legacy.fieldSelector]).toEqual(["watch", undefined]);
    expect(
      attrsFor("GET", "/api/v1/namespaces/default/pods/web?fieldSelector=x%3Dy").fieldSelector,
    ).toBeUndefined();
  });
});
