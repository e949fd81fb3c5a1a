import { createHmac, generateKeyPairSync, type KeyObject } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import { newNotFound } from "../../errors.ts";
import { type BoundObjects, serviceAccountClaims } from "./claims.ts";
import type { ServiceAccountTokenGetter } from "./getter.ts";
import {
  JWTTokenGenerator,
  keyIDFromPublicKey,
  newServiceAccountAuthenticator,
  parsePublicKeysPEM,
} from "./jwt.ts";

const issuer = "https://kubernetes.default.svc.cluster.local";
const t0 = new Date("2026-12-01T12:00:00Z");
const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
const otherRSA = generateKeyPairSync("rsa", { modulusLength: 2048 });

const obj = (kind: string, name: string, uid: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: { name, namespace: kind === "Node" ? undefined : "shop", uid },
  ...extra,
});

/** The cluster as the authenticator sees it: objects by kind and name. */
function cluster(
  ...objects: KubeObject[]
): ServiceAccountTokenGetter & { remove(kind: string, name: string): void } {
  const byKey = new Map(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
  const get = (kind: string, resource: string) => async (_ns: string, name?: string) => {
    const found = byKey.get(`${kind}/${name ?? _ns}`);
    if (!found) throw newNotFound({ group: "", resource }, name ?? _ns);
    return found;
  };
  return {
    getServiceAccount: get("ServiceAccount", "serviceaccounts"),
    getPod: get("Pod", "pods"),
    getSecret: get("Secret", "secrets"),
    getNode: (name) => get("Node", "nodes")(name),
    remove: (kind, name) => byKey.delete(`${kind}/${name}`),
  };
}

const sa = obj("ServiceAccount", "web", "sa-uid-1");
const pod = obj("Pod", "web-1", "pod-uid-1", { spec: { serviceAccountName: "web", nodeName: "node-1" } });
const node = obj("Node", "node-1", "node-uid-1");

async function mint(
  opts: {
    bound?: BoundObjects;
    audiences?: string[];
    seconds?: number;
    at?: Date;
    key?: KeyObject;
    iss?: string;
    account?: KubeObject;
  } = {},
): Promise<string> {
  const claims = serviceAccountClaims(
    opts.account ?? sa,
    opts.bound ?? {},
    opts.seconds ?? 3600,
    0,
    opts.audiences ?? [issuer],
    opts.at ?? t0,
    () => "0c1b2a39-8d5e-4f6a-9b7c-1d2e3f4a5b6c",
  );
  return new JWTTokenGenerator(opts.iss ?? issuer, opts.key ?? rsa.privateKey).generateToken(claims);
}

function authenticator(
  getter: ServiceAccountTokenGetter,
  at: Date,
  more: Partial<{ issuers: string[]; keys: KeyObject[]; audiences: string[] }> = {},
) {
  return newServiceAccountAuthenticator({
    issuers: more.issuers ?? [issuer],
    publicKeys: more.keys ?? [rsa.publicKey],
    apiAudiences: more.audiences ?? [issuer],
    getter,
    now: () => at,
  });
}

const later = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const payloadOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
const headerOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString());

describe("the token a TokenRequest signs (claims.go Claims, jwt.go JWTTokenGenerator)", () => {
  it("carries upstream's claims, in upstream's key order, with the key id in the header", async () => {
    const token = await mint({ bound: { pod, node } });
    expect(headerOf(token)).toEqual({ alg: "RS256", kid: keyIDFromPublicKey(rsa.publicKey) });
    const payload = payloadOf(token);
    expect(payload).toEqual({
      aud: [issuer],
      exp: t0.getTime() / 1000 + 3600,
      iat: t0.getTime() / 1000,
      iss: issuer,
      jti: "0c1b2a39-8d5e-4f6a-9b7c-1d2e3f4a5b6c",
      "kubernetes.io": {
        namespace: "shop",
        node: { name: "node-1", uid: "node-uid-1" },
        pod: { name: "web-1", uid: "pod-uid-1" },
        serviceaccount: { name: "web", uid: "sa-uid-1" },
      },
      nbf: t0.getTime() / 1000,
      sub: "system:serviceaccount:shop:web",
    });
    expect(Object.keys(payload)).toEqual([...Object.keys(payload)].sort());
  });

  it("signs with ES256 for a P-256 key, and the key id is the SHA-256 of the public key", async () => {
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const token = await mint({ key: ec.privateKey });
    expect(headerOf(token).alg).toBe("ES256");
    expect(headerOf(token).kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const res = await authenticator(cluster(sa), t0, { keys: [ec.publicKey] }).authenticateToken(token);
    expect(res?.user.name).toBe("system:serviceaccount:shop:web");
  });
});

describe("the service-account token authenticator (jwt.go, claims.go validator)", () => {
  it("turns a good token into the service account's user", async () => {
    const res = await authenticator(cluster(sa), later(10)).authenticateToken(await mint());
    expect(res).toEqual({
      user: {
        name: "system:serviceaccount:shop:web",
        uid: "sa-uid-1",
        groups: ["system:serviceaccounts", "system:serviceaccounts:shop"],
        extra: { "authentication.kubernetes.io/credential-id": ["JTI=0c1b2a39-8d5e-4f6a-9b7c-1d2e3f4a5b6c"] },
      },
      audiences: [issuer],
    });
  });

  it("adds the pod and its node to the user's extra for a pod-bound token", async () => {
    const res = await authenticator(cluster(sa, pod, node), t0).authenticateToken(
      await mint({ bound: { pod, node } }),
    );
    expect(res?.user.extra).toEqual({
      "authentication.kubernetes.io/pod-name": ["web-1"],
      "authentication.kubernetes.io/pod-uid": ["pod-uid-1"],
      "authentication.kubernetes.io/credential-id": ["JTI=0c1b2a39-8d5e-4f6a-9b7c-1d2e3f4a5b6c"],
      "authentication.kubernetes.io/node-name": ["node-1"],
      "authentication.kubernetes.io/node-uid": ["node-uid-1"],
    });
  });

  it("reads the bearer token from the Authorization header, and leaves other schemes alone", async () => {
    const a = authenticator(cluster(sa), t0);
    const req = (authorization?: string) => ({ headers: { authorization } }) as IncomingMessage;
    expect((await a.authenticateRequest(req(`Bearer ${await mint()}`)))?.user.name).toBe(
      "system:serviceaccount:shop:web",
    );
    expect(await a.authenticateRequest(req("Basic amFuZTpzZWNyZXQ="))).toBeNull();
    expect(await a.authenticateRequest(req("Bearer "))).toBeNull();
    expect(await a.authenticateRequest(req())).toBeNull();
  });

  it("says 'not mine' for a token that is not a JWT of its issuers, so the next authenticator may try", async () => {
    const a = authenticator(cluster(sa), t0);
    expect(await a.authenticateToken("31ada4fd-adec-460c-809a-9e56ceb75269")).toBeNull();
    expect(await a.authenticateToken(await mint({ iss: "https://elsewhere.example" }))).toBeNull();
  });

  it("accepts every listed issuer (an issuer can change without cutting off the tokens already out)", async () => {
    const old = await mint({ iss: "https://old.example" });
    const a = authenticator(cluster(sa), t0, { issuers: [issuer, "https://old.example"] });
    expect((await a.authenticateToken(old))?.user.name).toBe("system:serviceaccount:shop:web");
  });

  it("refuses a token signed by another key, or whose payload was changed", async () => {
    const a = authenticator(cluster(sa), t0);
    await expect(a.authenticateToken(await mint({ key: otherRSA.privateKey }))).rejects.toThrow(
      "invalid signature, no keys found",
    );
    // Same kid, other payload: the signature no longer matches.
    const [h, , s] = (await mint()).split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...payloadOf(await mint()), sub: "system:serviceaccount:kube-system:admin" }),
    ).toString("base64url");
    await expect(a.authenticateToken(`${h}.${forged}.${s}`)).rejects.toThrow("signature verification failed");
  });

  it("refuses an unsigned token and one 'signed' with the public key as an HMAC secret", async () => {
    const a = authenticator(cluster(sa), t0);
    const payload = Buffer.from(JSON.stringify(payloadOf(await mint()))).toString("base64url");
    const header = (h: object) => Buffer.from(JSON.stringify(h)).toString("base64url");
    await expect(a.authenticateToken(`${header({ alg: "none" })}.${payload}.`)).rejects.toThrow();
    const pem = rsa.publicKey.export({ type: "spki", format: "pem" });
    const h = header({ alg: "HS256", kid: keyIDFromPublicKey(rsa.publicKey) });
    const mac = createHmac("sha256", pem).update(`${h}.${payload}`).digest("base64url");
    await expect(a.authenticateToken(`${h}.${payload}.${mac}`)).rejects.toThrow();
  });

  it("verifies with any of several keys (rotation), found by key id", async () => {
    const keys = parsePublicKeysPEM(
      [otherRSA.publicKey, rsa.privateKey]
        .map((k) => k.export({ type: k.type === "public" ? "spki" : "pkcs8", format: "pem" }))
        .join("\n"),
    );
    expect(keys).toHaveLength(2);
    const res = await authenticator(cluster(sa), t0, { keys }).authenticateToken(await mint());
    expect(res?.user.uid).toBe("sa-uid-1");
  });

  it("refuses a token for another audience", async () => {
    const token = await mint({ audiences: ["vault"] });
    await expect(authenticator(cluster(sa), t0).authenticateToken(token)).rejects.toThrow(
      `token audiences ["vault"] is invalid for the target audiences ["${issuer}"]`,
    );
    // A token for both is good, and names only the API server's audience.
    const both = await authenticator(cluster(sa), t0).authenticateToken(
      await mint({ audiences: ["vault", issuer] }),
    );
    expect(both?.audiences).toEqual([issuer]);
  });

  it("refuses an expired token, but allows a minute of clock skew", async () => {
    const token = await mint({ seconds: 600 });
    expect(await authenticator(cluster(sa), later(600 + 60)).authenticateToken(token)).not.toBeNull();
    await expect(authenticator(cluster(sa), later(600 + 61)).authenticateToken(token)).rejects.toThrow(
      "service account token has expired",
    );
  });

  it("refuses a signed token whose claims have the wrong JSON types, as go-jose's typed decode does", async () => {
    // Found by the secured fuzz: `"exp": "soon"` passed the expiry check (a comparison with a
    // string is always false), and `"sub": 5`, `"nbf": {}` were accepted.
    const signed = async (odd: Record<string, unknown>) => {
      const claims = serviceAccountClaims(sa, {}, 600, 0, [issuer], t0, () => "jti");
      return new JWTTokenGenerator(issuer, rsa.privateKey).generateToken({ ...claims, ...odd } as never);
    };
    const auth = authenticator(cluster(sa), later(60));
    const refused: [Record<string, unknown>, string][] = [
      [{ exp: "soon" }, "json: cannot unmarshal string into Go struct field Claims.exp of type float64"],
      [{ nbf: {} }, "json: cannot unmarshal object into Go struct field Claims.nbf of type float64"],
      [{ sub: 5 }, "json: cannot unmarshal number into Go struct field Claims.sub of type string"],
      [{ aud: 5 }, "expected string or array value to unmarshal to Audience"],
      [{ aud: [issuer, 5] }, "expected string or array value to unmarshal to Audience"],
      [{ "kubernetes.io": "x" }, "cannot unmarshal string into Go struct field privateClaims.kubernetes.io"],
      [
        { "kubernetes.io": { namespace: "shop", serviceaccount: { name: ["web"] } } },
        "ref.name of type string",
      ],
    ];
    for (const [odd, message] of refused) {
      await expect(auth.authenticateToken(await signed(odd)), JSON.stringify(odd)).rejects.toThrow(message);
    }
    // null is Go's "absent"; the token is then judged on the rest (here: no expiry, still valid).
    expect(await auth.authenticateToken(await signed({ exp: null, jti: null }))).not.toBeNull();
  });

  it("refuses a token before its not-before time (past the leeway)", async () => {
    const token = await mint({ at: later(120) });
    expect(await authenticator(cluster(sa), later(60)).authenticateToken(token)).not.toBeNull();
    await expect(authenticator(cluster(sa), t0).authenticateToken(token)).rejects.toThrow(
      "service account token is not valid yet",
    );
  });

  it("refuses the token once its ServiceAccount is deleted", async () => {
    const c = cluster(sa);
    const token = await mint();
    expect(await authenticator(c, t0).authenticateToken(token)).not.toBeNull();
    c.remove("ServiceAccount", "web");
    await expect(authenticator(c, t0).authenticateToken(token)).rejects.toThrow(
      'serviceaccounts "web" not found',
    );
  });

  it("refuses it for a ServiceAccount recreated under the same name (a new uid is a new identity)", async () => {
    const token = await mint();
    const recreated = obj("ServiceAccount", "web", "sa-uid-2");
    await expect(authenticator(cluster(recreated), t0).authenticateToken(token)).rejects.toThrow(
      "service account UID (sa-uid-2) does not match claim (sa-uid-1)",
    );
  });

  it("refuses it for a ServiceAccount deleted more than a minute ago but still there (finalizers)", async () => {
    const token = await mint();
    const terminating = { ...sa, metadata: { ...sa.metadata, deletionTimestamp: "2026-12-01T11:58:00Z" } };
    await expect(authenticator(cluster(terminating), t0).authenticateToken(token)).rejects.toThrow(
      "service account shop/web has been deleted",
    );
  });

  it("refuses a pod-bound token once the pod is deleted, or replaced by one of the same name", async () => {
    const token = await mint({ bound: { pod, node } });
    const c = cluster(sa, pod, node);
    expect(await authenticator(c, t0).authenticateToken(token)).not.toBeNull();
    c.remove("Pod", "web-1");
    await expect(authenticator(c, t0).authenticateToken(token)).rejects.toThrow(
      "service account token has been invalidated",
    );
    const replaced = obj("Pod", "web-1", "pod-uid-2");
    await expect(authenticator(cluster(sa, replaced), t0).authenticateToken(token)).rejects.toThrow(
      "pod UID (pod-uid-2) does not match service account pod ref claim (pod-uid-1)",
    );
  });

  it("checks the node of a node-bound token, and only informs with the node of a pod-bound one", async () => {
    const nodeBound = await mint({ bound: { node } });
    await expect(authenticator(cluster(sa), t0).authenticateToken(nodeBound)).rejects.toThrow(
      "service account token has been invalidated",
    );
    // The pod's node may go away; the pod still vouches for the token.
    const podBound = await mint({ bound: { pod, node } });
    expect(await authenticator(cluster(sa, pod), t0).authenticateToken(podBound)).not.toBeNull();
  });

  it("refuses a secret-bound token whose secret is gone", async () => {
    const secret = obj("Secret", "web-token", "secret-uid-1");
    const token = await mint({ bound: { secret } });
    expect(await authenticator(cluster(sa, secret), t0).authenticateToken(token)).not.toBeNull();
    await expect(authenticator(cluster(sa), t0).authenticateToken(token)).rejects.toThrow(
      "service account token has been invalidated",
    );
  });
});
