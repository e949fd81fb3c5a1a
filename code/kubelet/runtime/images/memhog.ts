/**
 * course/memhog — allocates memory until something kills it: OOMKilled on demand.
 * No upstream counterpart: upstream's docs use polinux/stress (`stress --vm 1 --vm-bytes 250M`).
 *
 * Flags: `--step-mb` per step (default 16), `--interval-ms` between steps (default 50),
 * `--max-mb` to stop growing (default: never).
 * It touches every page it allocates (fill), so the memory is really resident — the RSS the
 * process runtime's memory limit watches. It allocates in steps on a timer rather than in one
 * loop, so the process stays responsive to signals like any server would.
 *
 * @upstream none — the example images of the course
 * @chapter 07-kubelet
 */
import { numberFlag, parseFlags } from "./flags.ts";

const { flags } = parseFlags(process.argv.slice(2));
const stepMb = numberFlag(flags, "step-mb", 16);
const intervalMs = numberFlag(flags, "interval-ms", 50);
const maxMb = numberFlag(flags, "max-mb", Number.POSITIVE_INFINITY);

const hoard: Buffer[] = [];
setInterval(() => {
  if (hoard.length * stepMb >= maxMb) return;
  hoard.push(Buffer.alloc(stepMb * 1024 * 1024).fill(1));
  console.log(`memhog: ${hoard.length * stepMb} MiB allocated`);
}, intervalMs);
