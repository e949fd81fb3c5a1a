/**
 * The kubelet command's flags and its start-up: upstream's names, a bad flag in one line with exit
 * 2, and a kubelet process that registers its node with the chapter-3 PKI's identity and stops on
 * SIGTERM, leaving its containers for the next kubelet.
 */
import { describe, expect, it } from "vitest";
import { FlagError } from "./cli/flag.ts";
import { kubeletMachine, parseKubeletFlags } from "./kubelet.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";

const file = new URL("./kubelet.ts", import.meta.url).pathname;

describe("kubelet flags", () => {
  it("needs --kubeconfig, and says so with an example", () => {
    const err = parseKubeletFlags(["--hostname-override=n1"]);
    expect(err).toBeInstanceOf(FlagError);
    expect((err as FlagError).message).toContain("--kubeconfig is required");
  });

  it("refuses a loopback --pod-cidr: Endpoints may not hold loopback addresses", () => {
    const err = parseKubeletFlags(["--kubeconfig=/nonexistent", "--pod-cidr=127.0.0.0/24"]);
    expect(err).toBeInstanceOf(FlagError);
    expect((err as FlagError).message).toBe(
      "kubelet: --pod-cidr: pod CIDR 127.0.0.0/24 may not be in the loopback range (127.0.0.0/8)",
    );
  });

  it("a bad flag is one line with the fix, exit 2", async () => {
    let p: CommandProcess | undefined;
    try {
      p = startCommand(file, ["--kubeconfig=/nonexistent", "--register-with-taints=a=b:Sometimes"]);
      expect(await p.waitForExit(60_000)).toBe(2);
      const lines = p.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^kubelet: .*--register-with-taints/);
    } finally {
      p?.kill();
    }
  });
});

describe("the machine a kubelet reports", () => {
  it("a fake-runtime kubelet takes the sizes --fake-capacity leaves unset from this host, so it can be Ready", async () => {
    const host = await kubeletMachine({ runtime: "process", nodeName: "n1", rootDir: "/tmp" });
    expect(host.rootfsCapacity).toBeGreaterThan(0);
    const fake = await kubeletMachine({
      runtime: "fake",
      nodeName: "hollow-1",
      rootDir: "/tmp",
      fakeCapacity: { cpu: "4", memory: "8Gi" },
    });
    expect(fake.numCores).toBe(4);
    expect(fake.memoryCapacity).toBe(8 * 2 ** 30);
    // Not given: this machine's root filesystem, not 0 ("missing node capacity for resources").
    expect(fake.rootfsCapacity).toBe(host.rootfsCapacity);
    // Its own identity: many simulated machines share this host.
    expect(fake.bootID).toBe("simulated-hollow-1");
    expect(fake.bootID).not.toBe(host.bootID);
  });
});
