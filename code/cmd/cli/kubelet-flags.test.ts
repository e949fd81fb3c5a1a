import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { FakeClock } from "../../client/util/clock.ts";
import {
  initialNode,
  type KubeletNodeConfig,
  nodeStatusOptionsWithDefaults,
} from "../../kubelet/kubelet-node-status.ts";
import { machineInfoFromCapacity, nodeAllocatableReservation } from "../../kubelet/nodestatus/setters.ts";
import { FlagError, parseFlags } from "./flag.ts";
import {
  configFlagDeprecation,
  type KubeletOptions,
  kubeletConfigurationFromFlags,
  kubeletFlags,
  parseResourceList,
  validateNodeLabels,
} from "./kubelet-flags.ts";

const set = { name: "kubelet", syntax: "pflag" as const, flags: kubeletFlags };
const dir = mkdtempSync(join(tmpdir(), "kubelet-flags-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The command line read as `kubelet …` would read it, with a machine called "Machine-1". */
function options(...argv: string[]): KubeletOptions | FlagError {
  const parsed = parseFlags(set, argv);
  if (parsed instanceof FlagError) return parsed;
  return kubeletConfigurationFromFlags(parsed.values, parsed.given, { hostname: () => " Machine-1 " });
}

function ok(...argv: string[]): KubeletOptions {
  const o = options(...argv);
  if (o instanceof FlagError) throw new Error(`refused: ${o.message}`);
  return o;
}

function refused(...argv: string[]): string {
  const o = options(...argv);
  if (!(o instanceof FlagError)) throw new Error(`accepted: ${argv.join(" ")}`);
  return o.message;
}

function configFile(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
  return path;
}

describe("kubelet flags: defaults", () => {
  it("without flags: upstream's defaults, the legacy ones for a kubelet without --config", () => {
    const o = ok();
    expect(o).toMatchObject({
      rootDir: "/var/lib/kubelet",
      certDir: "/var/lib/kubelet/pki",
      runtime: "process",
      nodeIPs: [],
      nodeLabels: {},
      kubeReserved: {},
      systemReserved: {},
      registerSchedulable: true,
      warnings: [],
      nodeStatus: {
        nodeStatusUpdateFrequencyMs: 10_000,
        nodeStatusReportFrequencyMs: 300_000,
        nodeLeaseDurationSeconds: 40,
        maxPods: 110,
        nodeStatusMaxImages: 50,
      },
    });
    expect(o.config).toMatchObject({
      port: 10250,
      readOnlyPort: 10255,
      healthzPort: 10248,
      registerNode: true,
    });
    expect(o.config.authorization.mode).toBe("AlwaysAllow");
    expect(o.evictionHard).toEqual([
      { signal: "memory.available", quantity: "100Mi" },
      { signal: "nodefs.available", percentage: 0.1 },
      { signal: "nodefs.inodesFree", percentage: 0.05 },
      { signal: "imagefs.available", percentage: 0.15 },
    ]);
  });

  it("names the node after the machine, trimmed and lowercased, unless overridden", () => {
    expect(ok()).toMatchObject({ hostname: "machine-1", nodeName: "machine-1", hostnameOverride: undefined });
    expect(ok("--hostname-override=Node-A")).toMatchObject({
      nodeName: "node-a",
      hostnameOverride: "Node-A",
    });
    const parsed = parseFlags(set, []);
    if (parsed instanceof FlagError) throw parsed;
    const empty = kubeletConfigurationFromFlags(parsed.values, parsed.given, { hostname: () => " " });
    expect((empty as FlagError).message).toBe(
      "kubelet: empty hostname is invalid (fix: give --hostname-override=NAME)",
    );
  });
});

describe("kubelet flags: each flag", () => {
  it("reads the per-node flags", () => {
    const o = ok(
      "--kubeconfig=k.conf",
      "--root-dir",
      "/tmp/k1",
      "--cert-dir=/tmp/k1/pki",
      "--node-ip=127.0.0.1",
      "--runtime=fake",
    );
    expect(o).toMatchObject({
      kubeconfig: "k.conf",
      rootDir: "/tmp/k1",
      certDir: "/tmp/k1/pki",
      nodeIP: "127.0.0.1",
      runtime: "fake",
    });
    expect(refused("--runtime=docker")).toBe(
      'kubelet: invalid argument "docker" for "--runtime" flag: use --runtime=process (real processes) or --runtime=fake (state on timers)',
    );
    expect(ok("--node-ip=10.0.0.1,fd00::1").nodeIPs).toEqual(["10.0.0.1", "fd00::1"]);
    // 1.32 logs an address it cannot parse and goes on without it.
    const sloppy = ok("--node-ip=localhost");
    expect(sloppy.nodeIP).toBeUndefined();
    expect(sloppy.warnings).toEqual(['"Could not parse node IP. Ignoring" IP="localhost"']);
    expect(refused("--node-ip=10.0.0.1,10.0.0.2")).toBe(
      'kubelet: bad --node-ip "10.0.0.1,10.0.0.2": must contain either a single IP or a dual-stack pair of IPs (fix: give one address, or an IPv4 and an IPv6 one: --node-ip=127.0.0.1)',
    );
    expect(refused("--node-ip=0.0.0.0,fd00::1")).toContain(
      "dual-stack node IP cannot include '0.0.0.0' or '::'",
    );
  });

  it("reads the configuration flags into their fields", () => {
    const c = ok(
      "--pod-manifest-path=/etc/manifests",
      "--sync-frequency=30s",
      "--file-check-frequency=5s",
      "--address=127.0.0.1",
      "--port=11250",
      "--read-only-port=0",
      "--healthz-port=0",
      "--healthz-bind-address=0.0.0.0",
      "--node-status-update-frequency=2s",
      "--max-pods=30",
      "--pod-cidr=10.244.1.0/24",
      "--register-node=false",
      "--tls-cert-file=/pki/k.crt",
      "--tls-private-key-file=/pki/k.key",
      "--client-ca-file=/pki/ca.crt",
      "--authorization-mode=Webhook",
      "--anonymous-auth=false",
      "--authentication-token-webhook",
      "--container-runtime-endpoint=unix:///run/course.sock",
    ).config;
    expect(c).toMatchObject({
      staticPodPath: "/etc/manifests",
      syncFrequencyMs: 30_000,
      fileCheckFrequencyMs: 5000,
      address: "127.0.0.1",
      port: 11250,
      readOnlyPort: 0,
      healthzPort: 0,
      healthzBindAddress: "0.0.0.0",
      nodeStatusUpdateFrequencyMs: 2000,
      // No --node-status-report-frequency flag exists: a flag-only update frequency leaves 5m.
      nodeStatusReportFrequencyMs: 300_000,
      maxPods: 30,
      podCIDR: "10.244.1.0/24",
      registerNode: false,
      tlsCertFile: "/pki/k.crt",
      tlsPrivateKeyFile: "/pki/k.key",
      authentication: {
        x509: { clientCAFile: "/pki/ca.crt" },
        anonymous: { enabled: false },
        webhook: { enabled: true },
      },
      authorization: { mode: "Webhook" },
      containerRuntimeEndpoint: "unix:///run/course.sock",
    });
  });

  it("refuses malformed values while parsing, in pflag's words", () => {
    expect(refused("--port=http")).toBe(
      'kubelet: invalid argument "http" for "--port" flag: strconv.ParseInt: parsing "http": invalid syntax',
    );
    expect(refused("--max-pods=9999999999")).toBe(
      'kubelet: invalid argument "9999999999" for "--max-pods" flag: strconv.ParseInt: parsing "9999999999": value out of range',
    );
    expect(refused("--sync-frequency=10")).toBe(
      'kubelet: invalid argument "10" for "--sync-frequency" flag: time: missing unit in duration "10"',
    );
    expect(refused("--address=any")).toBe(
      'kubelet: invalid argument "any" for "--address" flag: "any" is not a valid IP address',
    );
    expect(refused("--kube-reserved=cpu")).toBe(
      'kubelet: invalid argument "cpu" for "--kube-reserved" flag: malformed pair, expect string=string',
    );
    expect(refused("--eviction-hard=memory.available=1Gi")).toBe(
      'kubelet: invalid argument "memory.available=1Gi" for "--eviction-hard" flag: malformed pair, expect string<string',
    );
    expect(refused("--bogus")).toBe("kubelet: unknown flag: --bogus (see kubelet --help)");
  });

  it("refuses values that parse but cannot be used, with upstream's words and a fix", () => {
    expect(refused("--port=0")).toBe(
      "kubelet: failed to validate kubelet configuration, error: invalid configuration: port (--port) 0 must be between 1 and 65535, inclusive (fix: correct the value named (in the --config file or by its flag))",
    );
    expect(refused("--max-pods=-1", "--healthz-port=99999")).toContain(
      "error: [invalid configuration: healthzPort (--healthz-port) 99999 must be between 1 and 65535, inclusive, invalid configuration: maxPods (--max-pods) -1 must not be a negative number]",
    );
    expect(refused("--authorization-mode=RBAC")).toBe(
      "kubelet: unknown authorization mode RBAC (fix: use --authorization-mode=AlwaysAllow or Webhook)",
    );
    expect(refused("--pod-cidr=10.244.1.0")).toMatch(
      /^kubelet: --pod-cidr: invalid CIDR address: 10.244.1.0 \(fix: /,
    );
    expect(refused("--pod-cidr=10.244.1.0/33")).toMatch(/invalid CIDR address/);
  });

  it("--register-with-taints: Taint[], or the parser's message and the syntax to use", () => {
    expect(
      ok("--register-with-taints=dedicated=gpu:NoSchedule,spot:PreferNoSchedule").config.registerWithTaints,
    ).toEqual([
      { key: "dedicated", value: "gpu", effect: "NoSchedule" },
      { key: "spot", effect: "PreferNoSchedule" },
    ]);
    // Each appearance replaces the list (RegisterWithTaintsVar.Set).
    expect(
      ok("--register-with-taints=a:NoSchedule", "--register-with-taints=b:NoExecute").config
        .registerWithTaints,
    ).toEqual([{ key: "b", effect: "NoExecute" }]);
    expect(refused("--register-with-taints=a=b:Never")).toBe(
      'kubelet: invalid argument "a=b:Never" for "--register-with-taints" flag: invalid taint effect: Never, unsupported taint effect (write key=value:Effect or key:Effect, Effect one of NoSchedule, PreferNoSchedule, NoExecute)',
    );
    expect(refused("--register-with-taints=dedicated")).toContain(
      "invalid taint spec: dedicated (write key=value:Effect",
    );
  });

  it("--node-labels: a map that keeps every appearance, within the kubelet's allowed labels", () => {
    expect(
      ok("--node-labels=tier=web, zone = a", "--node-labels=node.kubernetes.io/pool=blue,flag").nodeLabels,
    ).toEqual({
      tier: "web",
      zone: "a",
      "node.kubernetes.io/pool": "blue",
      flag: "",
    });
    expect(
      ok("--node-labels=kubernetes.io/hostname=x,topology.kubernetes.io/zone=z,x.kubelet.kubernetes.io/y=1")
        .nodeLabels,
    ).toHaveProperty("kubernetes.io/hostname", "x");
    const msg = refused("--node-labels=node-role.kubernetes.io/control-plane=,k8s.io/b=1,app=ok");
    expect(msg).toBe(
      "kubelet: failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [k8s.io/b node-role.kubernetes.io/control-plane]; --node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone) (fix: use your own prefix (example.com/role=web) or node-role labels set later with kubectl label)",
    );
    expect(validateNodeLabels({ "bad key": "v" })).toMatch(
      /^invalid node labels: 'bad key' - name part must consist of/,
    );
    expect(validateNodeLabels({ ok: "not ok!" })).toMatch(
      /^invalid node labels: 'not ok!' - a valid label must be/,
    );
  });

  it("--kube-reserved / --system-reserved: a ResourceList of cpu, memory, ephemeral-storage, pid", () => {
    const o = ok(
      "--kube-reserved=cpu=200m,memory=500Mi",
      "--system-reserved=ephemeral-storage=1Gi",
      "--kube-reserved=pid=100",
    );
    expect(o.kubeReserved).toEqual({ cpu: "200m", memory: "500Mi", pid: "100" });
    expect(o.systemReserved).toEqual({ "ephemeral-storage": "1Gi" });
    expect(refused("--kube-reserved=gpu=1")).toBe(
      'kubelet: --kube-reserved value failed to parse: cannot reserve "gpu" resource (fix: give cpu, memory, ephemeral-storage or pid quantities, e.g. cpu=200m,memory=500Mi)',
    );
    expect(refused("--system-reserved=memory=-1Mi")).toContain(
      '--system-reserved value failed to parse: resource quantity for "memory" cannot be negative: -1Mi',
    );
    expect(parseResourceList({ cpu: "lots" })).toMatch(
      /^failed to parse quantity "lots" for "cpu" resource: quantities must match/,
    );
  });

  it("--eviction-hard: replaces the defaults, in the thresholds type the node status takes", () => {
    expect(ok("--eviction-hard=memory.available<1Gi,nodefs.available<5%").evictionHard).toEqual([
      { signal: "memory.available", quantity: "1Gi" },
      { signal: "nodefs.available", percentage: 0.05 },
    ]);
    expect(ok("--eviction-hard=").evictionHard).toEqual([]);
    expect(refused("--eviction-hard=memory.free<1Gi")).toBe(
      "kubelet: --eviction-hard: unsupported eviction signal memory.free (fix: write signal<quantity or signal<percent, e.g. memory.available<100Mi,nodefs.available<10%)",
    );
  });

  it("--fake-capacity (course flag): a ResourceList, for a fake-runtime kubelet only", () => {
    expect(ok("--runtime=fake", "--fake-capacity=cpu=4,memory=8Gi,pods=110").fakeCapacity).toEqual({
      cpu: "4",
      memory: "8Gi",
      pods: "110",
    });
    expect(ok("--runtime=fake").fakeCapacity).toBeUndefined();
    expect(refused("--fake-capacity=cpu=4")).toBe(
      "kubelet: --fake-capacity: only a fake-runtime kubelet simulates a machine (fix: add --runtime=fake, or drop --fake-capacity)",
    );
    expect(refused("--runtime=fake", "--fake-capacity=cpu=four")).toContain(
      '--fake-capacity: "four" is not a quantity for "cpu"',
    );
  });

  it("--warm-pool (course flag): Node processes kept booted, for a process-runtime kubelet only", () => {
    expect(ok().warmPool).toBe(0);
    expect(ok("--warm-pool=4").warmPool).toBe(4);
    expect(refused("--runtime=fake", "--warm-pool=2")).toBe(
      "kubelet: --warm-pool: only the process runtime starts processes (fix: drop --warm-pool, or use --runtime=process)",
    );
    expect(refused("--warm-pool=-1")).toContain("--warm-pool: -1 is negative");
  });

  it("says in --help which flags are the course's own", () => {
    expect(kubeletFlags.runtime.help).toMatch(/^COURSE FLAG \(upstream has none/);
    expect(kubeletFlags["fake-capacity"].help).toMatch(/^COURSE FLAG \(upstream has none/);
    expect(kubeletFlags["warm-pool"].help).toMatch(/^COURSE FLAG \(upstream has none/);
    expect(kubeletFlags.port.help).toContain(`(DEPRECATED: ${configFlagDeprecation})`);
  });
});

describe("kubelet flags: precedence (flags given > --config file > defaults)", () => {
  const file = configFile(
    "precedence.yaml",
    "port: 11250\nmaxPods: 20\nnodeStatusUpdateFrequency: 4s\nnodeLeaseDurationSeconds: 8\n" +
      "registerWithTaints:\n- key: from-file\n  effect: NoSchedule\nkubeReserved:\n  cpu: 100m\n" +
      "evictionHard:\n  memory.available: 200Mi\nunknownThing: 1\n",
  );

  it("uses the file where no flag is given, and the file's defaults where it is silent", () => {
    const o = ok(`--config=${file}`);
    expect(o.configFile).toBe(file);
    expect(o.config).toMatchObject({
      port: 11250,
      maxPods: 20,
      readOnlyPort: 0,
      authorization: { mode: "Webhook" },
    });
    // The file set the update frequency alone: the report frequency follows it.
    expect(o.nodeStatus).toMatchObject({
      nodeStatusUpdateFrequencyMs: 4000,
      nodeStatusReportFrequencyMs: 4000,
      nodeLeaseDurationSeconds: 8,
    });
    expect(o.config.registerWithTaints).toEqual([{ key: "from-file", effect: "NoSchedule" }]);
    expect(o.kubeReserved).toEqual({ cpu: "100m" });
    expect(o.evictionHard).toEqual([{ signal: "memory.available", quantity: "200Mi" }]);
    expect(o.warnings).toEqual([
      'Using lenient decoding as strict decoding failed: strict decoding error: unknown field "unknownThing"',
    ]);
  });

  it("lets each flag given win over the file, field by field, and says the flag is deprecated", () => {
    const o = ok(
      `--config=${file}`,
      "--max-pods=50",
      "--register-with-taints=from-flag:NoExecute",
      "--kube-reserved=memory=1Gi",
      "--node-status-update-frequency=1s",
    );
    expect(o.config.port).toBe(11250); // not given: the file's
    expect(o.config.maxPods).toBe(50);
    expect(o.config.registerWithTaints).toEqual([{ key: "from-flag", effect: "NoExecute" }]);
    expect(o.kubeReserved).toEqual({ memory: "1Gi" }); // the flag's map replaces the file's
    // The report frequency was defaulted with the file (4s) and the flag does not move it.
    expect(o.nodeStatus).toMatchObject({
      nodeStatusUpdateFrequencyMs: 1000,
      nodeStatusReportFrequencyMs: 4000,
    });
    expect(o.warnings).toContain(`Flag --max-pods has been deprecated, ${configFlagDeprecation}`);
    expect(o.warnings.filter((w) => w.startsWith("Flag --"))).toHaveLength(4);
  });

  it("validates the merged result: a flag can repair a file, or break it", () => {
    const bad = configFile("bad-port.yaml", "port: 70000\n");
    expect(refused(`--config=${bad}`)).toContain(
      "port (--port) 70000 must be between 1 and 65535, inclusive",
    );
    expect(ok(`--config=${bad}`, "--port=10251").config.port).toBe(10251);
    expect(refused(`--config=${file}`, "--port=0")).toContain("port (--port) 0 must be between");
  });

  it("says which file it could not load and why", () => {
    const missing = join(dir, "nope.yaml");
    expect(refused(`--config=${missing}`)).toBe(
      `kubelet: failed to load kubelet config file, path: ${missing}, error: failed to load Kubelet config file ${missing}, error failed to read kubelet config file "${missing}", error: open ${missing}: no such file or directory (fix: check the --config path: it must name a readable file)`,
    );
    const typo = configFile("typo.yaml", "maxPods: twenty\n");
    expect(refused(`--config=${typo}`)).toContain(
      "error failed to decode: json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type int32",
    );
    const badTaint = configFile("taint.yaml", "registerWithTaints:\n- key: a\n  effect: Never\n");
    expect(refused(`--config=${badTaint}`)).toContain(
      "invalid taint: {a  Never <nil>} (invalid taint effect: Never",
    );
  });
});

describe("kubelet flags: the values fit what the node status code takes", () => {
  it("builds the Node a kubelet registers, with its labels, taints, and allocatable", async () => {
    const o = ok(
      "--hostname-override=node-7",
      "--runtime=fake",
      "--fake-capacity=cpu=4,memory=8Gi,ephemeral-storage=100Gi,pods=30",
      "--node-labels=tier=web",
      "--register-with-taints=dedicated=gpu:NoSchedule",
      "--kube-reserved=cpu=500m,memory=1Gi",
      "--system-reserved=memory=512Mi",
      "--eviction-hard=memory.available<512Mi,nodefs.available<10%",
      "--max-pods=30",
      "--pod-cidr=10.244.7.0/24",
    );
    // Compile-time: every field below is typed by N1's KubeletNodeConfig.
    const k: KubeletNodeConfig = {
      client: {} as Clientset,
      clock: new FakeClock(0),
      nodeName: o.nodeName,
      hostname: o.hostname,
      nodeIP: o.nodeIP,
      kubeletPort: o.config.port,
      nodeLabels: o.nodeLabels,
      registerWithTaints: o.config.registerWithTaints,
      registerSchedulable: o.registerSchedulable,
      podCIDR: o.config.podCIDR,
      machine: machineInfoFromCapacity(o.nodeName, o.fakeCapacity ?? {}),
      kubeReserved: o.kubeReserved,
      systemReserved: o.systemReserved,
      evictionHard: o.evictionHard,
      runtimeType: "fake",
      options: o.nodeStatus,
    };
    expect(nodeStatusOptionsWithDefaults(k.options)).toEqual(o.nodeStatus);
    const node = await initialNode(k);
    expect(node.metadata.name).toBe("node-7");
    expect(node.metadata.labels).toMatchObject({ tier: "web", "kubernetes.io/hostname": "node-7" });
    expect(node.spec?.taints).toEqual([{ key: "dedicated", value: "gpu", effect: "NoSchedule" }]);
    expect(node.spec?.podCIDR).toBe("10.244.7.0/24");
    expect(node.status?.capacity?.pods).toBe("30");
    // memory: 8Gi − 1Gi (kube) − 512Mi (system) − 512Mi (eviction) = 6Gi; cpu: 4 − 500m.
    const reserved = nodeAllocatableReservation(
      node.status?.capacity ?? {},
      o.kubeReserved,
      o.systemReserved,
      o.evictionHard,
    );
    expect(reserved.cpu).toBe("500m");
    expect(node.status?.allocatable?.memory).toBe("6Gi");
    expect(node.status?.allocatable?.cpu).toBe("3500m");
  });
});
