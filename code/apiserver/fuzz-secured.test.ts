// The secured bad-input fuzz (testing/fuzz-secured.ts): chapter 2's malformed requests, sent over
// HTTPS by every kind of caller to two secured API servers — anonymous auth on and off — started
// as `kube-apiserver --client-ca-file --token-auth-file --service-account-* --authorization-mode=
// Node,RBAC --enable-admission-plugins=NodeRestriction` would. Any 5xx, reset, non-Status error,
// or an answer other than 401/403 where the caller is not allowed fails, with the seed to replay.
// FUZZ_SEED picks the seed (default: a fixed one; `random` for a new one each run), FUZZ_COUNT the
// number of requests.
import "reflect-metadata";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensurePKI } from "../pki/certs.ts";
import { PKIError } from "../pki/errors.ts";
import { type CertAndKey, parseCertPEM, parsePrivateKeyPEM } from "../pki/pki-helpers.ts";
import { parsePrivateKeyPEM as parseSigningKeyPEM } from "./authn/serviceaccount/jwt.ts";
import { type APIServer, type APIServerOptions, startAPIServer } from "./server.ts";
import { describeFailure, send } from "./testing/fuzz-run.ts";
import {
  expectation,
  type FuzzTarget,
  fuzzSecured,
  judge,
  securedFuzzCredentials,
  type Tally,
} from "./testing/fuzz-secured.ts";
import { serviceAccountConfigForPKI } from "./testing/service-account-tokens.ts";

const seed =
  process.env.FUZZ_SEED === "random"
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 1_203_020_417);
const count = Number(process.env.FUZZ_COUNT ?? 300);

const issuer = "https://kubernetes.default.svc.cluster.local";
const janeToken = "jane-fuzz-token-5b0f3c";

let dir: string;
let anonymous: APIServer; // --anonymous-auth=true (the default)
let strict: APIServer; // --anonymous-auth=false
let ca: string;
let admin: { cert: string; key: string };
const targets = {} as { anonymous: FuzzTarget; strict: FuzzTarget };

/** One request as the admin; the answer's status and parsed body. */
async function asAdmin(on: APIServer, method: string, path: string, body?: unknown) {
  const res = await send(
    on.url,
    {
      method,
      path,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      note: "admin",
    },
    10_000,
    { ca, ...admin },
  );
  return { status: res.status, body: res.contentType.includes("json") ? JSON.parse(res.body) : res.body };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fuzz-secured-"));
  const pki = await ensurePKI({ dir, nodes: ["node-1"], encryptionAlgorithm: "ECDSA-P256" });
  if (pki instanceof PKIError) throw pki;
  const { layout } = pki;
  await writeFile(join(dir, "tokens.csv"), `${janeToken},jane,1001,"dev,ops"\n`);
  const pem = async (id: string) => {
    const identity = layout.identities.find((i) => i.id === id);
    if (!identity) throw new Error(`no identity ${id} in the PKI`);
    return { cert: await readFile(identity.cert, "utf8"), key: await readFile(identity.key, "utf8") };
  };
  ca = await readFile(layout.caCert, "utf8");
  admin = await pem("admin");
  const sa = serviceAccountConfigForPKI(layout, issuer);
  const options = (anonymousAuth: boolean): APIServerOptions => ({
    securePort: 0,
    secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
    authentication: {
      clientCAFile: layout.caCert,
      tokenAuthFile: join(dir, "tokens.csv"),
      anonymousAuth,
      serviceAccounts: sa.authentication,
    },
    serviceAccountTokens: sa.tokens,
    authorizationModes: ["Node", "RBAC"],
    // The default chain, and NodeRestriction as every kubeadm cluster enables it.
    admission: { enablePlugins: ["NodeRestriction"] },
  });
  [anonymous, strict] = await Promise.all([startAPIServer(options(true)), startAPIServer(options(false))]);

  const inputs = {
    ca: {
      cert: parseCertPEM(ca) as CertAndKey["cert"],
      key: parsePrivateKeyPEM(await readFile(layout.caKey, "utf8")) as CertAndKey["key"],
    },
    admin,
    node: await pem("node-node-1"),
    janeToken,
    signingKey: parseSigningKeyPEM(await readFile(layout.serviceAccountKey, "utf8")),
    issuer,
    audiences: [issuer],
  };
  // A service-account token is bound to its ServiceAccount's uid, and each server has its own
  // `default` ServiceAccount: each server gets credentials of its own.
  const credentialsFor = async (server: APIServer): Promise<FuzzTarget> => {
    // The ServiceAccount admission's controller makes `default` soon after the start.
    let account = await asAdmin(server, "GET", "/api/v1/namespaces/default/serviceaccounts/default");
    for (let i = 0; i < 100 && account.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      account = await asAdmin(server, "GET", "/api/v1/namespaces/default/serviceaccounts/default");
    }
    expect(account.status).toBe(200);
    const tokenRequest = await asAdmin(
      server,
      "POST",
      "/api/v1/namespaces/default/serviceaccounts/default/token",
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {},
      },
    );
    expect(tokenRequest.status).toBe(201);
    const credentials = await securedFuzzCredentials({
      ...inputs,
      serviceAccountToken: tokenRequest.body.status.token,
      serviceAccount: account.body,
    });
    return { url: server.url, credentials };
  };
  [targets.anonymous, targets.strict] = await Promise.all([
    credentialsFor(anonymous),
    credentialsFor(strict),
  ]);
}, 60_000);

afterAll(async () => {
  await anonymous?.close();
  await strict?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it(`answers ${count} malformed requests from every kind of caller with the right 4xx, never a 5xx, and lets no one through (seed ${seed})`, {
  timeout: 120_000,
}, async () => {
  const tally: Tally = new Map();
  const failures = await fuzzSecured(targets, ca, seed, count, tally);
  const report = failures.slice(0, 20).map(describeFailure).join("\n");
  const seen = [...tally].sort().map(([k, n]) => `${k}: ${n}`);
  if (failures.length > 0) {
    console.error(
      `secured fuzz seed ${seed}: ${failures.length} of ${count} requests failed (replay with FUZZ_SEED=${seed})\n${report}\n${seen.join("\n")}`,
    );
  }
  expect(failures.length, `seed ${seed} (FUZZ_SEED=${seed} FUZZ_COUNT=${count} to replay)\n${report}`).toBe(
    0,
  );

  // Every gate was reached: each kind of caller was tried, and the admin's requests got past the
  // gates to the handlers (2xx and 4xx answers from them, not only 401/403).
  const principals = new Set([...tally.keys()].map((k) => k.split(/[ +]/)[0]));
  expect([...principals].sort()).toEqual([
    "admin",
    "anonymous",
    "node",
    "rejected",
    "serviceaccount",
    "user",
  ]);
  const adminStatuses = [...tally.keys()]
    .filter((k) => k.startsWith("admin →"))
    .map((k) => Number(k.split("→ ")[1]));
  expect(adminStatuses.some((s) => s >= 200 && s < 300)).toBe(true);
  expect(adminStatuses.some((s) => s >= 400 && s !== 401 && s !== 403)).toBe(true);

  // Both servers still serve a valid request afterwards.
  for (const server of [anonymous, strict]) {
    expect((await asAdmin(server, "GET", "/api/v1/namespaces")).status).toBe(200);
    expect((await asAdmin(server, "GET", "/readyz")).status).toBe(200);
  }
});

it("the oracle: a success where a 401 or 403 was due is a slip, a 5xx or a non-Status never passes", () => {
  const status = (code: number) =>
    JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", code });
  const get = { method: "GET", path: "/api/v1/namespaces/default/pods" };
  expect(judge(expectation("rejected", undefined, true, get), "GET", 200, "{}")).toMatch(/^SLIPPED THROUGH/);
  expect(judge(expectation("anonymous", undefined, true, get), "GET", 401, status(401))).toBe("expected 403");
  expect(judge(expectation("anonymous", undefined, false, get), "GET", 401, status(401))).toBeUndefined();
  expect(judge(expectation("user", undefined, true, get), "GET", 403, "Forbidden")).toBe("expected 403");
  expect(judge(expectation("admin", undefined, true, get), "GET", 500, status(500))).toBe("not a 4xx Status");
  expect(judge(expectation("admin", undefined, true, get), "GET", "reset", "")).toBe("not a 4xx Status");
  // A kubelet may not write another node's objects: any refusal, never a success.
  const patchNode = { method: "PATCH", path: "/api/v1/nodes/n" };
  expect(expectation("node", undefined, true, patchNode)).toBe("refused");
  expect(judge("refused", "PATCH", 200, "{}")).toMatch(/^SLIPPED THROUGH/);
  expect(judge("refused", "PATCH", 422, status(422))).toBeUndefined();
});
