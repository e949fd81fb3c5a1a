/**
 * Chapter 6: kube-scheduler as an HA pair (then a relay of four), against one API server, with
 * short durations (lease 2 s, renew deadline 1.5 s, retry 0.5 s):
 * - exactly one schedules: the leader's /metrics counts the bindings, the follower's none, and
 *   both are ready (the follower's informers are warm);
 * - `kubectl get lease -n kube-system` shows the holder;
 * - a partition (the fault proxy drops the leader's traffic) → the leader says
 *   "Leaderelection lost" and exits 1, a follower takes over;
 * - `kill -9` of the leader → the follower leads after the lease runs out;
 * - SIGTERM of the leader → it releases the Lease and exits 0; the follower leads at its next try;
 * - `kubectl delete lease` while the leader holds it → it creates the Lease again and keeps leading;
 * - `kubectl describe lease` lists a `LeaderElection` Event per takeover ("<identity> became leader").
 * Each takeover time is measured and printed beside its bound; nothing asserts on time (a
 * loaded machine only makes them longer), the order of events is what is checked.
 */
import { request } from "node:https";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { Lease } from "../api/coordination.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { runKubectl } from "../apiserver/testing/kubectl-env.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { FaultProxy } from "../testing/fault-proxy.ts";
import { freePort } from "../testing/ports.ts";
import { waitFor } from "../testing/wait-for.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";

const file = new URL("./kube-scheduler.ts", import.meta.url).pathname;
const durations = {
  lease: 2_000,
  renew: 1_500,
  retry: 500,
};
const electionFlags = [
  `--leader-elect-lease-duration=${durations.lease}ms`,
  `--leader-elect-renew-deadline=${durations.renew}ms`,
  `--leader-elect-retry-period=${durations.retry}ms`,
];

/** GET over HTTPS, trusting the scheduler's self-signed certificate. */
function httpsGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false }, (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

interface Candidate {
  name: string;
  process: CommandProcess;
  identity: string;
  port: number;
}

describeWithTools("kube-scheduler leader election", ["kubectl"], () => {
  let server: APIServer;
  let client: Clientset;
  const candidates: Candidate[] = [];
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url });
    await client.coreV1.nodes().create({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "n1", labels: { "kubernetes.io/hostname": "n1" } },
      status: {
        capacity: { cpu: "64", memory: "64Gi", pods: "110" },
        allocatable: { cpu: "64", memory: "64Gi", pods: "110" },
      },
    });
  });
  afterAll(async () => {
    for (const c of candidates) c.process.kill();
    for (const p of proxies) await p.stop();
    client?.closeIdleConnections();
    await server?.close();
  });

  /** Starts a scheduler, straight to the API server or through `proxy`; resolves once it is a synced candidate. */
  async function start(name: string, proxy?: FaultProxy): Promise<Candidate> {
    const port = await freePort();
    const master = proxy ? `http://${proxy.address}` : server.url;
    const process = startCommand(file, [
      `--master=${master}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      ...electionFlags,
    ]);
    const candidate = { name, process, identity: "", port };
    candidates.push(candidate);
    await process.waitForStderr('"Caches are synced"');
    const m = /"Leader election candidate" identity="([^"]+)"/.exec(process.stderr());
    expect(m, process.stderr()).not.toBeNull();
    candidate.identity = m?.[1] ?? "";
    return candidate;
  }

  const lease = (): Promise<Lease> => client.coordinationV1.leases("kube-system").get("kube-scheduler");
  const holder = async () => (await lease()).spec?.holderIdentity ?? "";

  /** Resolves with the ms from `t0` until `c` holds the Lease. */
  async function leadsAfter(c: Candidate, t0: number): Promise<number> {
    await waitFor(`${c.name} to hold the Lease`, async () => (await holder()) === c.identity, 30_000);
    return Date.now() - t0;
  }

  /** How many pods `c` has bound, from its own /metrics. */
  async function scheduledBy(c: Candidate): Promise<number> {
    const { body } = await httpsGet(`https://127.0.0.1:${c.port}/metrics`);
    const m =
      /scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} (\d+)/.exec(body);
    return m ? Number(m[1]) : 0;
  }

  async function createPod(name: string): Promise<void> {
    await client.coreV1.pods("default").create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
    });
  }
  const bound = (name: string) =>
    waitFor(`${name} to be bound`, async () => (await client.coreV1.pods("default").get(name)).spec.nodeName);

  const kubectl = (args: string[]) => runKubectl(process.env, [`--server=${server.url}`, ...args]);

  const report = (what: string, ms: number, bound: string) =>
    console.log(`kube-scheduler ${what}: ${ms} ms (${bound})`);

  it("one leads and schedules; the follower is warm and idle; a partition, kill -9 and SIGTERM hand over", async () => {
    // A leads (it starts alone, behind a proxy we can partition); B follows.
    const proxy = await FaultProxy.start(server.url);
    proxies.push(proxy);
    const a = await start("A", proxy);
    await leadsAfter(a, Date.now());
    const b = await start("B");
    await a.process.waitForStderr("successfully acquired lease kube-system/kube-scheduler");

    for (const p of ["p1", "p2", "p3"]) await createPod(p);
    for (const p of ["p1", "p2", "p3"]) await bound(p);
    expect(await scheduledBy(a)).toBe(3);
    expect(await scheduledBy(b)).toBe(0);
    expect(b.process.stderr()).not.toContain("successfully acquired lease");
    // Both serve a green /healthz and /readyz: a synced follower is ready (warm caches).
    for (const c of [a, b]) {
      expect(await httpsGet(`https://127.0.0.1:${c.port}/healthz`)).toEqual({ status: 200, body: "ok" });
      expect((await httpsGet(`https://127.0.0.1:${c.port}/readyz?verbose`)).body).toBe(
        "[+]leaderElection ok\n[+]sched-handler-sync ok\nreadyz check passed\n",
      );
    }
    const table = await kubectl(["get", "lease", "-n", "kube-system", "kube-scheduler"]);
    expect(table.out).toMatch(new RegExp(`^NAME\\s+HOLDER\\s+AGE\\nkube-scheduler\\s+${a.identity}\\s+`));

    // Partition A from the API server: its renewals hang and time out; after the renew deadline
    // it stops leading and exits 1; B takes over once the lease it last saw is 2 s old.
    const cut = Date.now();
    proxy.drop();
    expect(await a.process.waitForExit(30_000)).toBe(1);
    const aExited = Date.now() - cut;
    expect(a.process.stderr()).toContain('E "Leaderelection lost"');
    const bLeads = await leadsAfter(b, cut);
    report(
      "partition → old leader exits",
      aExited,
      `renewDeadline ${durations.renew} ms plus one request timeout`,
    );
    report(
      "partition → follower leads",
      bLeads,
      `leaseDuration + retryPeriod = ${durations.lease + durations.retry} ms`,
    );
    await createPod("p4");
    await bound("p4");
    expect(await scheduledBy(b)).toBe(1);

    // kill -9 the leader (B): nothing is released; C waits out the lease it last saw.
    const c = await start("C");
    const transitionsBefore = (await lease()).spec?.leaseTransitions ?? 0;
    const killed = Date.now();
    b.process.child.kill("SIGKILL");
    const cLeads = await leadsAfter(c, killed);
    report(
      "kill -9 → follower leads",
      cLeads,
      `leaseDuration + retryPeriod = ${durations.lease + durations.retry} ms`,
    );
    expect((await lease()).spec?.leaseTransitions).toBe(transitionsBefore + 1);
    await createPod("p5");
    await bound("p5");
    expect(await scheduledBy(c)).toBe(1);

    // SIGTERM the leader (C): it stops, releases the Lease (ReleaseOnCancel) and exits 0;
    // D sees an empty holder at its next try.
    const d = await start("D");
    const termed = Date.now();
    c.process.child.kill("SIGTERM");
    const dLeads = await leadsAfter(d, termed);
    report("SIGTERM → follower leads", dLeads, `about one retryPeriod = ${durations.retry} ms`);
    expect(await c.process.waitForExit()).toBe(0);
    expect(c.process.stderr()).toContain('I "Requested to terminate, exiting"');
    expect(c.process.stderr()).not.toContain("Leaderelection lost");
    expect(await holder()).toBe(d.identity);

    // Every takeover left an Event on the Lease, from the first profile's scheduler name; C,
    // stopped by SIGTERM, also said it stopped (A lost its lease and B was killed: they exited
    // at once, nothing flushed). kubectl finds them by the Lease's name, namespace, kind and uid.
    const events = async () => {
      const { out } = await kubectl(["describe", "lease", "-n", "kube-system", "kube-scheduler"]);
      return out.slice(out.indexOf("\nEvents:"));
    };
    const event = (msg: string) =>
      new RegExp(`Normal\\s+LeaderElection\\s+\\S+\\s+default-scheduler\\s+${msg}\\n`);
    const history = await waitFor("D's event", async () => {
      const e = await events();
      return event(`${d.identity} became leader`).test(e) && e;
    });
    for (const x of [a, b, c]) expect(history).toMatch(event(`${x.identity} became leader`));
    expect(history).toMatch(event(`${c.identity} stopped leading`));
    for (const x of [a, b, d]) expect(history).not.toContain(`${x.identity} stopped leading`);

    // `kubectl delete lease` while D holds it, alone: its next renewal is the optimistic PUT of
    // the Lease it last wrote, and a Lease may be created by a PUT (its strategy's
    // AllowCreateOnUpdate), so that PUT brings it back — a new object (new uid) with the record D
    // wrote, transitions and acquire time kept — and D keeps leading and scheduling. (With a
    // follower, the follower's next try could find no Lease first and create it; then D finds
    // it held by another and stops after its renew deadline. The randomized run exercises it.)
    const before = await lease();
    expect((await kubectl(["delete", "lease", "-n", "kube-system", "kube-scheduler"])).out).toBe(
      'lease.coordination.k8s.io "kube-scheduler" deleted\n',
    );
    const recreated = await waitFor("the Lease to be created again", async () => {
      const l = await lease();
      return l.metadata.uid !== before.metadata.uid && l;
    });
    expect(recreated.spec).toMatchObject({
      holderIdentity: d.identity,
      leaseTransitions: before.spec?.leaseTransitions,
      acquireTime: before.spec?.acquireTime,
    });
    const listed = await kubectl(["get", "lease", "-n", "kube-system"]);
    expect(listed.out).toMatch(new RegExp(`\\nkube-scheduler\\s+${d.identity}\\s+`));
    await createPod("p6");
    await bound("p6");
    expect(await scheduledBy(d)).toBe(1);
    expect(d.process.stderr()).not.toContain("Leaderelection lost");

    // The new Lease has a new uid: describe shows only its own events — D's stop, not the past.
    d.process.child.kill("SIGTERM");
    expect(await d.process.waitForExit()).toBe(0);
    const after = await events();
    expect(after).toMatch(event(`${d.identity} stopped leading`));
    expect(after).not.toContain("became leader");
  }, 180_000);
});
