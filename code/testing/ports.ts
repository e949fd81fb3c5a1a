/**
 * Free ports for tests and benchmarks that start servers which need their port before they
 * listen (a real etcd's `--listen-client-urls`, a member's advertised URL).
 *
 * The port is found by listening on port 0 and closing again, so another process could take it in
 * between; that race is accepted here because every caller binds it at once, on 127.0.0.1.
 *
 * @upstream none — test tooling (etcd's integration tests pick ports the same way)
 * @chapter 01-etcd-watch
 */
import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
