/**
 * `npm run cluster` — the whole miniature cluster, driven by kubectl. Built in chapter 8.
 *
 * Until chapter 8 lands there is no cluster to start; this says so plainly instead of pretending.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { root } from "./course.ts";

const entry = join(root, "code", "cmd", "cluster.ts");
if (!existsSync(entry)) {
  console.error("npm run cluster: the whole cluster is built in chapter 8 and is not in the course yet.");
  console.error("Run the chapters that exist with `npm run chapter -- <n>` (`npm run chapter` lists them).");
  process.exit(2);
}
const { main } = (await import(entry)) as { main: (argv: string[]) => Promise<number> };
// The supervisor exits when it is done, whatever handles are left (keep-alive sockets, timers).
process.exit(await main(process.argv.slice(2)));
