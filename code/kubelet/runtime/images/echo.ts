/**
 * course/echo — prints its arguments and the environment variables named by `--env`, exits 0.
 * No upstream counterpart: upstream's examples use `echo` from busybox.
 *
 * Shows that command, args and env from the pod spec reach the process: `args: ["hello", "--env=POD_NAME,GREETING"]`
 * prints `hello` then `POD_NAME=…` and `GREETING=…`.
 *
 * @upstream none — the example images of the course
 * @chapter 07-kubelet
 */
import { parseFlags } from "./flags.ts";

const { flags, rest } = parseFlags(process.argv.slice(2));
console.log(rest.join(" "));
for (const name of (flags.get("env") ?? "").split(",").filter(Boolean)) {
  console.log(`${name}=${process.env[name] ?? ""}`);
}
