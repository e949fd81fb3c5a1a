/**
 * Kubeconfig loading and merging on temp files — and the same files read by kubectl (v1.32) and
 * by @kubernetes/client-node, which must resolve the same server, user and namespace.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import { KubeconfigError, loadConfig } from "./api.ts";
import { buildConfigFromFlags, newNonInteractiveDeferredLoadingClientConfig } from "./client-config.ts";
import { load, newDefaultClientConfigLoadingRules } from "./loader.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

let dir: string;
const at = (...p: string[]) => join(dir, ...p);

const fileA = `apiVersion: v1
kind: Config
current-context: a-ctx
clusters:
- name: alpha
  cluster:
    server: https://alpha.example:6443
    certificate-authority: ca.crt
- name: shared
  cluster:
    server: https://from-a.example
contexts:
- name: a-ctx
  context: {cluster: alpha, user: alice, namespace: team-a}
- name: shared-ctx
  context: {cluster: shared, user: shared-user}
users:
- name: alice
  user:
    client-certificate: certs/alice.crt
    client-key: certs/alice.key
- name: shared-user
  user:
    token: from-a
`;

const fileB = `apiVersion: v1
kind: Config
current-context: b-ctx
clusters:
- name: beta
  cluster:
    server: https://beta.example:6443
    certificate-authority-data: ${b64("-----BEGIN CERTIFICATE-----\nBETA\n-----END CERTIFICATE-----\n")}
- name: shared
  cluster:
    server: https://from-b.example
    insecure-skip-tls-verify: true
contexts:
- name: b-ctx
  context: {cluster: beta, user: bob}
users:
- name: bob
  user:
    tokenFile: bob.token
- name: shared-user
  user:
    token: from-b
`;

/** No current-context: the next file's is used. */
const fileNoCurrent = `apiVersion: v1
kind: Config
clusters:
- name: gamma
  cluster: {server: "http://127.0.0.1:8080"}
users:
- name: gina
  user: {token: never-sent-over-http}
contexts:
- name: g-ctx
  context: {cluster: gamma, user: gina, namespace: g}
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "clientcmd-"));
  await mkdir(at("a"));
  await mkdir(at("b"));
  await writeFile(at("a", "config"), fileA);
  await writeFile(at("b", "config"), fileB);
  await writeFile(at("b", "bob.token"), "bob-secret\n");
  await writeFile(at("g.yaml"), fileNoCurrent);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const kubeconfigEnv = (...files: string[]) => ({ KUBECONFIG: files.join(delimiter), HOME: at("nohome") });

describe("loading one file", () => {
  it("reads clusters, users and contexts, decoding *-data to PEM", () => {
    const c = loadConfig(fileB, "/x/b");
    expect(c.currentContext).toBe("b-ctx");
    expect(c.clusters.get("beta")?.certificateAuthorityData).toContain("BETA");
    expect(c.contexts.get("b-ctx")).toEqual({
      cluster: "beta",
      authInfo: "bob",
      namespace: undefined,
      locationOfOrigin: "/x/b",
    });
  });

  it("treats an empty file as an empty config and rejects duplicates and non-configs", () => {
    expect(loadConfig("", "f").contexts.size).toBe(0);
    expect(() => loadConfig("clusters:\n- name: a\n- name: a\n", "/f")).toThrow(
      'duplicate cluster name "a" in /f',
    );
    expect(() => loadConfig("kind: Pod\n", "/f")).toThrow("kind is Pod, expected Config");
  });
});

describe("merging KUBECONFIG's files", () => {
  it("takes current-context from the first file that sets it, and each name from the first file that has it, whole", () => {
    const rules = newDefaultClientConfigLoadingRules(
      kubeconfigEnv(at("a", "config"), at("missing"), at("b", "config")),
    );
    const c = load(rules);
    expect(c.currentContext).toBe("a-ctx");
    expect([...c.contexts.keys()].sort()).toEqual(["a-ctx", "b-ctx", "shared-ctx"]);
    // `shared` from a wins whole: b's insecure-skip-tls-verify does not leak in.
    expect(c.clusters.get("shared")).toMatchObject({ server: "https://from-a.example" });
    expect(c.clusters.get("shared")?.insecureSkipTLSVerify).toBeUndefined();
    expect(c.authInfos.get("shared-user")?.token).toBe("from-a");
  });

  it("resolves relative paths against each file's own directory", () => {
    const c = load(newDefaultClientConfigLoadingRules(kubeconfigEnv(at("a", "config"), at("b", "config"))));
    expect(c.clusters.get("alpha")?.certificateAuthority).toBe(at("a", "ca.crt"));
    expect(c.authInfos.get("alice")?.clientCertificate).toBe(at("a", "certs", "alice.crt"));
    expect(c.authInfos.get("bob")?.tokenFile).toBe(at("b", "bob.token"));
  });

  it("uses a later file's current-context when earlier files set none", () => {
    const cc = newNonInteractiveDeferredLoadingClientConfig(
      newDefaultClientConfigLoadingRules(kubeconfigEnv(at("g.yaml"), at("b", "config"))),
    );
    expect(cc.contextName()).toBe("b-ctx");
  });

  it("falls back to ~/.kube/config without KUBECONFIG", () => {
    expect(newDefaultClientConfigLoadingRules({ HOME: "/home/u" }).precedence).toEqual([
      join("/home/u", ".kube", "config"),
    ]);
  });
});

describe("ClientConfig: context → rest.Config", () => {
  const env = () => kubeconfigEnv(at("a", "config"), at("b", "config"));

  it("builds host, TLS files and namespace from the current context", () => {
    const cc = newNonInteractiveDeferredLoadingClientConfig(newDefaultClientConfigLoadingRules(env()));
    expect(cc.clientConfig()).toEqual({
      host: "https://alpha.example:6443",
      tlsClientConfig: {
        insecure: undefined,
        serverName: undefined,
        caData: undefined,
        caFile: at("a", "ca.crt"),
        certData: undefined,
        certFile: at("a", "certs", "alice.crt"),
        keyData: undefined,
        keyFile: at("a", "certs", "alice.key"),
      },
    });
    expect(cc.namespace()).toBe("team-a");
  });

  it("follows --context and --namespace, reading the user's tokenFile", () => {
    const cc = newNonInteractiveDeferredLoadingClientConfig(newDefaultClientConfigLoadingRules(env()), {
      currentContext: "b-ctx",
      context: { namespace: "override" },
      timeout: 5000,
    });
    const config = cc.clientConfig();
    expect(config.host).toBe("https://beta.example:6443");
    expect(config.bearerToken).toBe("bob-secret");
    expect(config.bearerTokenFile).toBe(at("b", "bob.token"));
    expect(config.tlsClientConfig?.caData).toContain("BETA");
    expect(config.timeout).toBe(5000);
    expect(cc.namespace()).toBe("override");
    expect(
      newNonInteractiveDeferredLoadingClientConfig(newDefaultClientConfigLoadingRules(env()), {
        currentContext: "b-ctx",
      }).namespace(),
    ).toBe("default");
  });

  it("sends no credentials to a plain-HTTP server", () => {
    const cc = newNonInteractiveDeferredLoadingClientConfig(
      { explicitPath: at("g.yaml"), precedence: [] },
      { currentContext: "g-ctx" },
    );
    expect(cc.clientConfig()).toEqual({ host: "http://127.0.0.1:8080" });
  });

  it("--kubeconfig overrides KUBECONFIG; --server overrides the cluster's", () => {
    const cc = newNonInteractiveDeferredLoadingClientConfig({
      explicitPath: at("b", "config"),
      precedence: [at("a", "config")],
    });
    expect(cc.contextName()).toBe("b-ctx");
    expect(buildConfigFromFlags("https://elsewhere:1", at("b", "config")).host).toBe("https://elsewhere:1");
  });
});

describe("errors name the file, the missing name and what exists", () => {
  const rules = () => newDefaultClientConfigLoadingRules(kubeconfigEnv(at("a", "config"), at("b", "config")));

  it("for an unknown context", () => {
    expect(() =>
      newNonInteractiveDeferredLoadingClientConfig(rules(), { currentContext: "x" }).clientConfig(),
    ).toThrow(
      new KubeconfigError(
        `context "x" not found in ${at("a", "config")}, ${at("b", "config")}: available: a-ctx, shared-ctx, b-ctx`,
      ),
    );
  });

  it("for a context whose cluster or user is missing", async () => {
    await writeFile(
      at("broken.yaml"),
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: nowhere, user: nobody}\nclusters:\n- name: here\n  cluster: {server: https://h}\n",
    );
    expect(() => buildConfigFromFlags("", at("broken.yaml"))).toThrow(
      `cluster "nowhere" (of context "c") not found in ${at("broken.yaml")}: available: here`,
    );
  });

  it("for a missing --kubeconfig, no current context, and both a CA file and CA data", async () => {
    expect(() => buildConfigFromFlags("", at("nope"))).toThrow(`kubeconfig ${at("nope")} does not exist`);
    expect(() => buildConfigFromFlags("", at("g.yaml"))).toThrow(
      `no current context in ${at("g.yaml")}: set current-context or pass --context (available: g-ctx)`,
    );
    await writeFile(
      at("both.yaml"),
      `current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster: {server: "https://k", certificate-authority: ca.crt, certificate-authority-data: ${b64("x")}}\nusers:\n- name: u\n  user: {}\n`,
    );
    expect(() => buildConfigFromFlags("", at("both.yaml"))).toThrow(
      "certificate-authority-data and certificate-authority are both specified",
    );
  });
});

describe("the same files through @kubernetes/client-node's KubeConfig", () => {
  // client-node throws on a name defined twice (kubectl keeps the first), so this pair has none.
  it("resolves the same server, user, namespace and files for a two-file KUBECONFIG", async () => {
    await writeFile(at("c.yaml"), fileNoCurrent.replace("http://127.0.0.1:8080", "https://gamma.example"));
    const files = [at("a", "config"), at("c.yaml")];
    const saved = process.env.KUBECONFIG;
    const kc = new KubeConfig();
    try {
      process.env.KUBECONFIG = files.join(delimiter);
      // contextFromStartingConfig: keep the first file's current-context, as kubectl does.
      kc.loadFromDefault(undefined, true);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
    for (const context of ["a-ctx", "g-ctx"]) {
      kc.setCurrentContext(context);
      const ours = newNonInteractiveDeferredLoadingClientConfig(
        newDefaultClientConfigLoadingRules(kubeconfigEnv(...files)),
        {
          currentContext: context === "a-ctx" ? "" : context,
        },
      );
      const config = ours.clientConfig();
      expect(config.host).toBe(kc.getCurrentCluster()?.server);
      expect(config.tlsClientConfig?.caFile).toBe(kc.getCurrentCluster()?.caFile);
      expect(config.tlsClientConfig?.certFile).toBe(kc.getCurrentUser()?.certFile);
      expect(config.bearerToken).toBe(kc.getCurrentUser()?.token);
      expect(ours.namespace()).toBe(kc.getContextObject(context)?.namespace ?? "default");
    }
  });
});

describeWithTools("the same files through kubectl config view --minify", ["kubectl"], (tools) => {
  // biome-ignore lint/suspicious/noExplicitAny: kubectl's JSON
  const view = async (files: string[], args: string[] = []): Promise<any> => {
    const out = await promisify(execFile)(
      tools.kubectl.path as string,
      ["config", "view", "--minify", "--raw", "-o", "json", ...args],
      { env: { ...process.env, KUBECONFIG: files.join(delimiter) } },
    );
    return JSON.parse(out.stdout);
  };

  it.each([
    ["the first file's context", [], "", "a"],
    ["--context b-ctx", ["--context", "b-ctx"], "b-ctx", "b"],
    ["a name both files define (first wins)", ["--context", "shared-ctx"], "shared-ctx", "a"],
  ])("agrees with kubectl on %s", async (_what, args, context, origin) => {
    // kubectl prints paths as the file wrote them; we hold them resolved against that file's directory.
    const resolved = (p: string | undefined) => (p ? resolve(at(origin), p) : undefined);
    const files = [at("a", "config"), at("missing"), at("b", "config")];
    const k = await view(files, args);
    const ours = newNonInteractiveDeferredLoadingClientConfig(
      newDefaultClientConfigLoadingRules(kubeconfigEnv(...files)),
      {
        currentContext: context,
      },
    );
    expect(ours.contextName()).toBe(k["current-context"]);
    const kCluster = k.clusters[0].cluster;
    const kUser = k.users[0].user;
    const config = ours.clientConfig();
    expect(config.host).toBe(kCluster.server);
    expect(config.tlsClientConfig?.insecure ?? false).toBe(kCluster["insecure-skip-tls-verify"] ?? false);
    expect(config.tlsClientConfig?.caFile).toBe(resolved(kCluster["certificate-authority"]));
    expect(config.tlsClientConfig?.certFile).toBe(resolved(kUser["client-certificate"]));
    expect(config.bearerToken).toBe(kUser.token ?? (kUser.tokenFile ? "bob-secret" : undefined));
    expect(config.bearerTokenFile).toBe(resolved(kUser.tokenFile));
    expect(ours.namespace()).toBe(k.contexts[0].context.namespace ?? "default");
  });
});
