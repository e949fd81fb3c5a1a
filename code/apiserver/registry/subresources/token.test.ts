import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JWTTokenGenerator } from "../../authn/serviceaccount/jwt.ts";
import { type APIServer, startAPIServer } from "../../server.ts";

const issuer = "https://kubernetes.default.svc.cluster.local";
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());

describe("POST serviceaccounts/<name>/token (TokenREST.Create)", () => {
  let server: APIServer;
  let plain: APIServer;
  const call = async (base: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, warning: res.headers.get("warning"), body: await res.json() };
  };
  const tokenFor = (name: string, spec: unknown, metadata: unknown = {}) =>
    call(server.url, "POST", `/api/v1/namespaces/default/serviceaccounts/${name}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      metadata,
      spec,
    });

  beforeAll(async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    server = await startAPIServer({
      insecurePort: 0,
      serviceAccountTokens: {
        generator: new JWTTokenGenerator(issuer, privateKey),
        apiAudiences: [issuer],
        maxExpirationSeconds: 24 * 3600,
      },
    });
    plain = await startAPIServer({ insecurePort: 0 });
    for (const s of [server, plain]) {
      await call(s.url, "POST", "/api/v1/namespaces/default/serviceaccounts", {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "web" },
      });
    }
    await call(server.url, "POST", "/api/v1/namespaces/default/pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1" },
      spec: { serviceAccountName: "web", containers: [{ name: "c", image: "nginx" }] },
    });
  });
  afterAll(async () => {
    await server?.close();
    await plain?.close();
  });

  it("defaults: an hour, the API server's audience, the name and namespace of the URL (201)", async () => {
    const before = Math.floor(Date.now() / 1000);
    const { status, body } = await tokenFor("web", {});
    expect(status).toBe(201);
    expect(body.metadata).toMatchObject({ name: "web", namespace: "default" });
    expect(body.spec).toMatchObject({ audiences: [issuer], expirationSeconds: 3600 });
    const claims = claimsOf(body.status.token);
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    // The status's expiration is never after the token's own.
    expect(Date.parse(body.status.expirationTimestamp) / 1000).toBeLessThanOrEqual(claims.exp);
  });

  it("refuses less than ten minutes and more than 2^32 seconds (422)", async () => {
    const short = await tokenFor("web", { expirationSeconds: 599 });
    expect(short.status).toBe(422);
    expect(short.body.message).toBe(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    );
    const long = await tokenFor("web", { expirationSeconds: 2 ** 32 + 1 });
    expect(long.body.message).toContain("may not specify a duration larger than 2^32 seconds");
  });

  it("shortens a request over --service-account-max-token-expiration, with a warning", async () => {
    const { status, warning, body } = await tokenFor("web", { expirationSeconds: 48 * 3600 });
    expect(status).toBe(201);
    expect(warning).toBe('299 - "requested expiration of 172800 seconds shortened to 86400 seconds"');
    const claims = claimsOf(body.status.token);
    expect(claims.exp - claims.iat).toBe(86400);
  });

  it("gives a pod-bound token of exactly 3607 seconds a year, flagged stale after the hour", async () => {
    const { body } = await tokenFor("web", {
      expirationSeconds: 3607,
      boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "web-1" },
    });
    const claims = claimsOf(body.status.token);
    expect(claims.exp - claims.iat).toBe(365 * 24 * 3600);
    expect(claims["kubernetes.io"].warnafter - claims.iat).toBe(3607);
    // The status says what was asked for.
    expect(Date.parse(body.status.expirationTimestamp) / 1000 - claims.iat).toBeLessThanOrEqual(3607);
  });

  it("refuses a bound uid that is no longer the object's (409), and kinds it cannot bind to (400)", async () => {
    const stale = await tokenFor("web", {
      boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "web-1", uid: "gone" },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on Pod "web-1": the UID in the bound object reference (gone) does not match the UID in record. The object might have been deleted and then recreated',
    );
    const cm = await tokenFor("web", { boundObjectRef: { kind: "ConfigMap", apiVersion: "v1", name: "x" } });
    expect(cm.status).toBe(400);
    expect(cm.body.message).toBe("cannot bind token to object of type /v1, Kind=ConfigMap");
    const missing = await tokenFor("web", {
      boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "nope" },
    });
    expect(missing.status).toBe(404);
  });

  it("refuses a body that names another ServiceAccount (422)", async () => {
    const { status, body } = await tokenFor("web", {}, { name: "other" });
    expect(status).toBe(422);
    expect(body.message).toBe(
      'TokenRequest.authentication.k8s.io "web" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified',
    );
  });

  it("is not served without a signing key (404), and takes no other verb (405)", async () => {
    const none = await call(plain.url, "POST", "/api/v1/namespaces/default/serviceaccounts/web/token", {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {},
    });
    expect(none.status).toBe(404);
    expect(
      (await call(server.url, "GET", "/api/v1/namespaces/default/serviceaccounts/web/token")).status,
    ).toBe(405);
  });
});
