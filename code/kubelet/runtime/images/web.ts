/**
 * course/web — an HTTP server whose liveness and readiness you can flip from inside the pod.
 * No upstream counterpart: the course's stand-in for registry.k8s.io/e2e-test-images/agnhost (netexec).
 *
 * Solves:
 * - probes need something to probe: `/healthz` answers 200 until the file /tmp/unhealthy exists
 *   in the container, then 500; `/readyz` answers 200 until /tmp/unready exists, then 503. So
 *   `kubectl exec web -- touch /tmp/unhealthy` makes the liveness probe fail and the kubelet
 *   restart the container (whose new root has no such file: it comes back healthy).
 * - a slow starter for startup probes: `--start-delay=S` waits S seconds before it listens.
 *
 * Flags: `--port` (or $PORT, default 8080), `--start-delay` seconds (default 0).
 * Every request is logged to stdout (`GET /healthz 200`), so `kubectl logs` shows the probes.
 * SIGTERM: stops accepting, closes, exits 0 — a well-behaved server's graceful shutdown.
 *
 * @upstream kubernetes/kubernetes test/images/agnhost/netexec/netexec.go (the role: a test server with toggles)
 * @chapter 07-kubelet
 */
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { containerPath } from "./container-root.ts";
import { numberFlag, parseFlags } from "./flags.ts";

const { flags } = parseFlags(process.argv.slice(2));
const port = numberFlag(flags, "port", 8080, "PORT");
const startDelay = numberFlag(flags, "start-delay", 0);
const startedAt = new Date();

const server = createServer((req, res) => {
  let status = 200;
  let body: string;
  if (req.url === "/healthz") {
    const sick = existsSync(containerPath("/tmp/unhealthy"));
    status = sick ? 500 : 200;
    body = sick ? "unhealthy: /tmp/unhealthy exists\n" : "ok\n";
  } else if (req.url === "/readyz") {
    const unready = existsSync(containerPath("/tmp/unready"));
    status = unready ? 503 : 200;
    body = unready ? "not ready: /tmp/unready exists\n" : "ok\n";
  } else {
    body =
      `hello from ${process.env.HOSTNAME ?? "web"}\n` +
      `pod: ${process.env.POD_NAME ?? "?"}  ip: ${process.env.POD_IP ?? "?"}  node: ${process.env.NODE_NAME ?? "?"}\n` +
      `started: ${startedAt.toISOString()}  path: ${req.url}\n`;
  }
  res.writeHead(status, { "content-type": "text/plain" });
  res.end(body);
  console.log(`${req.method} ${req.url} ${status}`);
});

process.on("SIGTERM", () => {
  console.log("web: SIGTERM, shutting down");
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

setTimeout(() => {
  server.listen(port, () => console.log(`web: listening on :${port}`));
}, startDelay * 1000);
if (startDelay > 0) console.log(`web: starting in ${startDelay} s`);
