/**
 * The secured bad-input fuzz — chapter 2's malformed requests (fuzz.ts), sent to the secured API
 * server (HTTPS, x509 client certificates, a token file, service-account tokens, Node and RBAC
 * authorization, the default admission chain) by every kind of caller: the admin, a kubelet, an
 * unprivileged user and service account, no one, and callers whose credential is wrong.
 * Upstream's filter chain (authentication → impersonation → authorization) is in
 * kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/config.go (DefaultBuildHandlerChain).
 *
 * Solves: the gates must hold whatever the request carries. A bad body, a huge body, a broken
 * patch or a bad selector must not reach — or crash — a handler before the caller is known and
 * allowed; a caller whose certificate is expired or of another CA, or whose token is forged,
 * expired or meant for another audience, is refused with 401 and never falls back to anonymous.
 *
 * Invariants (the oracle, `expectation`):
 * - a bad credential is 401 on every server, anonymous auth on or off;
 * - no credential (or one no authenticator reads: Basic, a bare `Bearer`, a certificate with no
 *   CN) is 401 with `--anonymous-auth=false`, else system:anonymous, and every fuzzed path is a
 *   resource RBAC grants system:unauthenticated nothing on: 403;
 * - jane (token file) and the `default` service account hold no binding: 403 on every request;
 * - impersonation by anyone but the admin is 403; the admin impersonating someone without
 *   `system:masters` is 403 too (the request runs as them); group, uid or extra headers with no
 *   user are 400 (upstream answers 500 — see filters/impersonation.ts);
 * - the admin and the kubelet may get anything below 500, and a 4xx is a Status with its code;
 * - requests are a pure function of (seed, index) and the credentials.
 *
 * @upstream none — test harness; the authenticators it attacks: kubernetes/kubernetes pkg/kubeapiserver/authenticator/config.go
 * @chapter 03-api-security
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { CompactSign } from "jose";
import {
  type CertAndKey,
  type EncryptionAlgorithmType,
  encodeCertPEM,
  encodePrivateKeyPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
} from "../../pki/pki-helpers.ts";
import { mulberry32 } from "../../testing/random.ts";
import { serviceAccountClaims } from "../authn/serviceaccount/claims.ts";
import { JWTTokenGenerator } from "../authn/serviceaccount/jwt.ts";
import { type FuzzRequest, fuzzRequest, Random } from "./fuzz.ts";
import { acceptable, type ClientTLS, type FuzzFailure, isStatus, runFuzz, send } from "./fuzz-run.ts";

// #region callers
/** Who the server should find behind a credential, before impersonation. */
export type Principal = "admin" | "node" | "user" | "serviceaccount" | "anonymous" | "rejected";

/** One credential: a client certificate, an Authorization header, both, or neither. */
export interface Credential {
  label: string;
  principal: Principal;
  tls?: { cert: string; key: string };
  authorization?: string | string[];
}

/** What the fixture hands over: the PKI's files as PEM, and the credentials made at start. */
export interface SecuredFuzzInputs {
  ca: CertAndKey;
  admin: { cert: string; key: string };
  node: { cert: string; key: string };
  /** jane's line of the token file. */
  janeToken: string;
  /** A token for default/default from the TokenRequest API (`kubectl create token default`). */
  serviceAccountToken: string;
  /** The ServiceAccount default/default itself (its uid goes into forged tokens). */
  serviceAccount: { metadata: { name?: string; namespace?: string; uid?: string } };
  /** `--service-account-signing-key-file`, `--service-account-issuer`, `--api-audiences`. */
  signingKey: KeyObject;
  issuer: string;
  audiences: string[];
  /** The key type of the certificates made here (ECDSA: fast). */
  algorithm?: EncryptionAlgorithmType;
}

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

/**
 * Every credential the fuzz presents: the valid ones, the ones that are "no credential" to every
 * authenticator, and the bad ones — certificates that must not verify, tokens that must not pass.
 */
export async function securedFuzzCredentials(i: SecuredFuzzInputs): Promise<Credential[]> {
  const algorithm = i.algorithm ?? "ECDSA-P256";
  const now = new Date();
  const day = 86400_000;
  const cert = async (
    subject: { cn: string; o?: string[]; usages?: ("clientAuth" | "serverAuth")[] },
    by: CertAndKey,
    at: Date,
  ) => {
    const key = await newPrivateKey(algorithm);
    const config = {
      commonName: subject.cn,
      organization: subject.o ?? [],
      altNames: { dnsNames: [], ips: [] },
      usages: subject.usages ?? ["clientAuth" as const],
    };
    return { cert: encodeCertPEM(await newSignedCert(config, key, by, at)), key: encodePrivateKeyPEM(key) };
  };
  const foreignCA = await newCertificateAuthority("kubernetes", algorithm, now);
  const masters = { cn: "kubernetes-admin", o: ["system:masters"] };

  // Service-account JWTs: the right key with a wrong claim, or the right claims with a wrong key.
  const sa = i.serviceAccount as Parameters<typeof serviceAccountClaims>[0];
  const claims = (over: { at?: Date; audiences?: string[]; sa?: typeof sa } = {}) =>
    serviceAccountClaims(over.sa ?? sa, {}, 3600, 0, over.audiences ?? i.audiences, over.at ?? now);
  const signer = new JWTTokenGenerator(i.issuer, i.signingKey);
  const otherKey = await newPrivateKey(algorithm);
  const valid = i.serviceAccountToken;
  const [head, payload, signature] = valid.split(".");
  // A character from the middle: the last one of a base64url signature carries padding bits,
  // and changing only those leaves the same bytes (a different text, the same valid signature).
  const mid = signature.length >> 1;
  const flipped = `${head}.${payload}.${signature.slice(0, mid)}${signature[mid] === "A" ? "B" : "A"}${signature.slice(mid + 1)}`;
  const ghost = {
    ...sa,
    metadata: { ...sa.metadata, name: "ghost", uid: "00000000-0000-0000-0000-000000000000" },
  };
  const wrongUID = { ...sa, metadata: { ...sa.metadata, uid: "11111111-1111-1111-1111-111111111111" } };

  const gone = { apiVersion: "v1", kind: "Pod", metadata: { name: "gone", namespace: "default", uid: "2" } };
  const boundToGonePod = serviceAccountClaims(sa, { pod: gone as typeof sa }, 3600, 0, i.audiences, now);
  const oddClaims: Record<string, unknown>[] = [
    { "kubernetes.io": "x" },
    { "kubernetes.io": { namespace: "default", serviceaccount: null } },
    { "kubernetes.io": { namespace: "default", serviceaccount: { name: 5 }, pod: { name: [] } } },
    { sub: 5 },
    { exp: "soon" },
    { nbf: { later: true } },
    { aud: 5 },
    { aud: [null] },
  ];
  const bearer = (token: string) => `Bearer ${token}`;
  const rejectedTokens: [string, string][] = [
    ["unknown token", "wrong"],
    ["jane's token, one character short", i.janeToken.slice(0, -1)],
    ["jane's token and more", `${i.janeToken}x`],
    ["jane's token upper-cased", i.janeToken.toUpperCase()],
    ["three dots of nothing", "a.b.c"],
    ["a JWT of four parts", `${valid}.x`],
    ["a JWT with its signature cut", `${head}.${payload}.`],
    ["a JWT with a flipped signature", flipped],
    ["alg none", `${b64({ alg: "none", typ: "JWT" })}.${payload}.`],
    ["header not JSON", `${b64("{alg")}.${payload}.${signature}`],
    ["payload not JSON", `${head}.${b64("[[[")}.${signature}`],
    ["expired", await signer.generateToken(claims({ at: new Date(now.getTime() - 2 * day) }))],
    ["not yet valid", await signer.generateToken(claims({ at: new Date(now.getTime() + 2 * day) }))],
    ["wrong audience", await signer.generateToken(claims({ audiences: ["https://elsewhere.example"] }))],
    [
      "wrong issuer",
      await new JWTTokenGenerator("https://evil.example", i.signingKey).generateToken(claims()),
    ],
    ["signed by another key", await new JWTTokenGenerator(i.issuer, otherKey).generateToken(claims())],
    ["a ServiceAccount that does not exist", await signer.generateToken(claims({ sa: ghost }))],
    ["the ServiceAccount's uid wrong", await signer.generateToken(claims({ sa: wrongUID }))],
    // Algorithm confusion: HMAC keyed with the public key, which the verifier must not accept.
    [
      "HS256 keyed with the public key",
      await new CompactSign(Buffer.from(b64(claims()), "base64url"))
        .setProtectedHeader({ alg: "HS256", kid: signer.keyID })
        .sign(
          new Uint8Array(Buffer.from(createPublicKey(i.signingKey).export({ type: "spki", format: "pem" }))),
        ),
    ],
    ["a pod-bound token for a pod that is gone", await signer.generateToken(boundToGonePod)],
    ["payload null", `${head}.${b64("null")}.${signature}`],
    ["an issuer that is a number", `${head}.${b64({ iss: 5 })}.${signature}`],
    ["a kid that is a number", `${b64({ alg: "ES256", kid: 5 })}.${payload}.${signature}`],
    // Signed with the right key, but claims no signer of ours writes: still a 401, not a crash.
    ...(await Promise.all(
      oddClaims.map(
        async (odd, n): Promise<[string, string]> => [
          `signed, odd claims ${n}`,
          await signer.generateToken({ ...claims(), ...odd } as Parameters<typeof signer.generateToken>[0]),
        ],
      ),
    )),
    ["12 KiB of token", "t".repeat(12 * 1024)],
    ["40 KiB of token (beyond Node's default header limit)", "t".repeat(40 * 1024)],
    ["non-ASCII", "tökén"],
  ];
  const [expired, early, foreign, foreignAdmin, serverOnly, noCN] = await Promise.all([
    cert(masters, i.ca, new Date(now.getTime() - 3 * 365 * day)),
    cert(masters, i.ca, new Date(now.getTime() + 2 * day)),
    cert({ cn: "jane" }, foreignCA, now),
    cert(masters, foreignCA, now),
    cert({ ...masters, usages: ["serverAuth"] }, i.ca, now),
    cert({ cn: "", o: ["system:masters"] }, i.ca, now),
  ]);
  const foreignCASelf = { cert: encodeCertPEM(foreignCA.cert), key: encodePrivateKeyPEM(foreignCA.key) };
  return [
    { label: "admin certificate", principal: "admin", tls: i.admin },
    {
      label: "admin certificate and a bad token",
      principal: "admin",
      tls: i.admin,
      authorization: "Bearer x",
    },
    { label: "node-1's certificate", principal: "node", tls: i.node },
    { label: "jane's token", principal: "user", authorization: bearer(i.janeToken) },
    { label: "jane's token, lower-case scheme", principal: "user", authorization: `bearer ${i.janeToken}` },
    // A failing authenticator does not stop the union: the next one may still know the caller.
    {
      label: "expired certificate and jane's token",
      principal: "user",
      tls: expired,
      authorization: bearer(i.janeToken),
    },
    { label: "service-account token", principal: "serviceaccount", authorization: bearer(valid) },
    // upstream splits the header in three at spaces: what follows the token is not read.
    {
      label: "service-account token and more words",
      principal: "serviceaccount",
      authorization: `${bearer(valid)} and more`,
    },
    { label: "jane's token in spaces", principal: "user", authorization: `  ${bearer(i.janeToken)}  ` },
    // Two Authorization headers: the first counts (Go's Header.Get; Node drops the rest).
    {
      label: "a bad token, then jane's",
      principal: "rejected",
      authorization: ["Bearer x", bearer(i.janeToken)],
    },
    {
      label: "jane's token, then a bad one",
      principal: "user",
      authorization: [bearer(i.janeToken), "Bearer x"],
    },
    { label: "no credential", principal: "anonymous" },
    {
      label: "Basic auth (no authenticator reads it)",
      principal: "anonymous",
      authorization: "Basic YWRtaW46YWRtaW4=",
    },
    { label: "a bare Bearer", principal: "anonymous", authorization: "Bearer" },
    { label: "Bearer and two spaces (1.32: no token)", principal: "anonymous", authorization: "Bearer  x" },
    { label: "a certificate with no CN", principal: "anonymous", tls: noCN },
    { label: "expired system:masters certificate", principal: "rejected", tls: expired },
    { label: "not-yet-valid system:masters certificate", principal: "rejected", tls: early },
    { label: "certificate of another CA", principal: "rejected", tls: foreign },
    { label: "system:masters certificate of another CA", principal: "rejected", tls: foreignAdmin },
    { label: "another CA's own certificate", principal: "rejected", tls: foreignCASelf },
    { label: "system:masters certificate for serverAuth only", principal: "rejected", tls: serverOnly },
    {
      label: "foreign certificate and a bad token",
      principal: "rejected",
      tls: foreign,
      authorization: "Bearer x",
    },
    ...rejectedTokens.map(
      ([label, token]): Credential => ({
        label: `token: ${label}`,
        principal: "rejected",
        authorization: bearer(token),
      }),
    ),
  ];
}
// #endregion callers

// #region impersonation
interface Impersonation {
  note: string;
  headers: Record<string, string | string[]>;
  /** The request then runs as someone who holds cluster-admin (system:masters, or a kubelet as itself). */
  privileged: boolean;
  /** Group, uid or extra without a user: refused before any check. */
  userless: boolean;
}

const impersonations: Impersonation[] = [
  { note: "as jane", headers: { "Impersonate-User": "jane" }, privileged: false, userless: false },
  {
    note: "as system:anonymous",
    headers: { "Impersonate-User": "system:anonymous" },
    privileged: false,
    userless: false,
  },
  {
    note: "as the default service account",
    headers: { "Impersonate-User": "system:serviceaccount:default:default" },
    privileged: false,
    userless: false,
  },
  // A kubelet's name without its group is not a kubelet: the Node authorizer needs system:nodes.
  {
    note: "as node-1, no group",
    headers: { "Impersonate-User": "system:node:node-1" },
    privileged: false,
    userless: false,
  },
  {
    note: "as node-1 in system:nodes",
    headers: { "Impersonate-User": "system:node:node-1", "Impersonate-Group": "system:nodes" },
    privileged: true,
    userless: false,
  },
  {
    note: "as jane in system:masters",
    headers: { "Impersonate-User": "jane", "Impersonate-Group": "system:masters" },
    privileged: true,
    userless: false,
  },
  {
    note: "as jane with odd extras",
    headers: {
      "Impersonate-User": "jane",
      "Impersonate-Extra-%zz": "x",
      "Impersonate-Extra-scopes.example.com%2Fa": ["a", "b"],
      "Impersonate-Uid": "1",
    },
    privileged: false,
    userless: false,
  },
  {
    note: "a group, no user",
    headers: { "Impersonate-Group": "system:masters" },
    privileged: false,
    userless: true,
  },
  { note: "a uid, no user", headers: { "Impersonate-Uid": "0" }, privileged: false, userless: true },
  { note: "an extra, no user", headers: { "Impersonate-Extra-a": "b" }, privileged: false, userless: true },
  {
    note: "as a 300-character user",
    headers: { "Impersonate-User": "u".repeat(300) },
    privileged: false,
    userless: false,
  },
];
// #endregion impersonation

// #region oracle
/**
 * What an answer must be: exactly this code (as a Status); `"refused"`, any 4xx Status but never
 * a success; or `"any"`, anything below 500 with a 4xx a Status.
 */
export type Expectation = 401 | 403 | 400 | "refused" | "any";

/** The rule for one request: from its caller, its impersonation and the server's anonymous auth. */
export function expectation(
  who: Principal,
  as: Impersonation | undefined,
  anonymousAuth: boolean,
  request: Pick<FuzzRequest, "method" | "path">,
): Expectation {
  // Authentication comes first: a bad credential, or none where anonymous is off, stops there.
  if (who === "rejected") return 401;
  if (who === "anonymous" && !anonymousAuth) return 401;
  if (as?.userless) return 400;
  const privileged = who === "admin" && (!as || as.privileged);
  // A path trick may be refused anywhere after authentication (403, 404): never let through.
  if (!privileged && pathTricks.includes(request.path)) return "refused";
  if (as) return privileged ? "any" : 403;
  if (who === "node") return nodeExpectation(request);
  return privileged ? "any" : 403;
}

/**
 * A kubelet (node-1) through the Node authorizer and NodeRestriction: the fuzzed objects belong
 * to no pod of node-1 and are not node-1, so it may read some (services, nodes, pods) and write
 * only events; configmaps, deployments and namespaces it may not even read.
 */
function nodeExpectation({ method, path }: Pick<FuzzRequest, "method" | "path">): Expectation {
  const resourcePath = path.split("?")[0];
  const namespaces =
    resourcePath.startsWith("/api/v1/namespaces") && !resourcePath.startsWith("/api/v1/namespaces/default/");
  if (namespaces || /\/(configmaps|deployments)(\/|$)/.test(resourcePath)) return 403;
  const write = !["GET", "HEAD", "OPTIONS"].includes(method);
  if (write && !/\/events(\/|$)/.test(resourcePath)) return "refused";
  return "any";
}

/**
 * Go's net/http refuses a request line it cannot parse (`%zz` in the path) with a 400 before any
 * handler; ours does the same in a Status (server.ts, parseRequestInfo), before authentication.
 */
const malformedPath = (body: string) => body.includes("malformed request path");

/** Why an answer breaks the rule, or undefined when it keeps it. */
export function judge(expected: Expectation, method: string, status: FuzzFailure["status"], body: string) {
  const ok = acceptable(status, body, method);
  if (expected === "any") return ok ? undefined : "not a 4xx Status";
  if (typeof status === "number" && status < 300) return `SLIPPED THROUGH: ${status}, expected ${expected}`;
  if (expected === "refused") return ok ? undefined : "not a 4xx Status";
  if (status === expected && (method === "HEAD" || isStatus(body, expected))) return undefined;
  if (status === 400 && isStatus(body, 400) && malformedPath(body)) return undefined;
  return `expected ${expected}`;
}
// #endregion oracle

// #region requests
/**
 * Paths that start where a caller may go (discovery, health, version) and lead where it may not:
 * authorization and routing must read the same path, or one of these is a way in.
 */
const pathTricks = [
  "/api/../api/v1/namespaces/kube-system/secrets",
  "/apis/%2e%2e/api/v1/namespaces",
  "/version/../api/v1/namespaces/default/pods",
  "/healthz/..%2f..%2fapi/v1/namespaces",
  "/readyz/%2e%2e/api/v1/nodes",
  "/api/v1/namespaces/default/pods/..%2f..%2fsecrets",
  "/api/v1/namespaces/default%2Fsecrets",
  "//api/v1/namespaces",
  "/api/v1//namespaces/default/configmaps",
  "/api/./v1/./nodes",
  "/openapi/v2/../../api/v1/namespaces",
  "/livez/%2E%2E/api/v1/namespaces/kube-system/configmaps",
];

/** Request `index` of the seed: the server it goes to, the credential, and the request. */
export function securedFuzzRequest(
  seed: number,
  index: number,
  servers: { anonymous: readonly Credential[]; strict: readonly Credential[] },
): { anonymousAuth: boolean; credential: Credential; as?: Impersonation; request: FuzzRequest } {
  const r = new Random(mulberry32((seed ^ 0x5ec0de) * 1_000_003 + index));
  const anonymousAuth = r.chance(0.5);
  const credentials = anonymousAuth ? servers.anonymous : servers.strict;
  // Many requests carry the admin's credential, so that the bodies reach the handlers and the
  // admission chain; some a valid one of little power; the rest any credential, mostly bad ones.
  const draw = r.next();
  const pool =
    draw < 0.4
      ? credentials.filter((c) => c.principal === "admin")
      : draw < 0.6
        ? credentials.filter((c) => ["node", "user", "serviceaccount"].includes(c.principal))
        : credentials;
  const credential = r.pick(pool);
  const as = r.chance(0.2) ? r.pick(impersonations) : undefined;
  const trick = r.chance(0.08) ? r.pick(pathTricks) : undefined;
  const base: FuzzRequest = trick
    ? { method: "GET", path: trick, headers: {}, note: `path trick ${trick}` }
    : fuzzRequest(seed, index);
  const headers: Record<string, string | string[]> = { ...base.headers };
  if (credential.authorization !== undefined) headers.authorization = credential.authorization;
  const note = `${credential.label}${as ? `, ${as.note}` : ""} (anonymous ${anonymousAuth ? "on" : "off"}): ${base.note}`;
  return {
    anonymousAuth,
    credential,
    as,
    // Node's client sends a list as one header line per value.
    request: { ...base, headers: { ...headers, ...as?.headers } as Record<string, string>, note },
  };
}
// #endregion requests

// #region run
/** A count per caller and answer, for the report: it shows each gate was reached. */
export type Tally = Map<string, number>;

/** One server under test: its URL and the credentials made for it (same labels, same order). */
export interface FuzzTarget {
  url: string;
  credentials: readonly Credential[];
}

/**
 * Sends `count` requests of the seed, each to the server with anonymous auth on or off as it
 * says, over TLS trusting `ca`, with the request's client certificate.
 */
export async function fuzzSecured(
  servers: { anonymous: FuzzTarget; strict: FuzzTarget },
  ca: string,
  seed: number,
  count: number,
  tally: Tally = new Map(),
): Promise<FuzzFailure[]> {
  const credentials = { anonymous: servers.anonymous.credentials, strict: servers.strict.credentials };
  return runFuzz(count, async (index) => {
    const { anonymousAuth, credential, as, request } = securedFuzzRequest(seed, index, credentials);
    const tls: ClientTLS = { ca, ...credential.tls };
    const target = anonymousAuth ? servers.anonymous : servers.strict;
    const res = await send(target.url, request, 15_000, tls);
    const expected = expectation(credential.principal, as, anonymousAuth, request);
    const key = `${credential.principal}${as ? "+impersonating" : ""} → ${res.status}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
    const why = judge(expected, request.method, res.status, res.body);
    return why ? { index, request, status: res.status, body: res.body.slice(0, 400), why } : undefined;
  });
}
// #endregion run
