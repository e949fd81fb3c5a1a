/**
 * Token proxy (tests only) — a local HTTP proxy that adds `Authorization: Bearer <token>` to
 * every request it forwards to the API server.
 *
 * Solves: kubectl does not send a bearer token over plain HTTP, and until the secure port
 * exists (another part of chapter 3) our test servers speak plain HTTP; pointing kubectl at one
 * proxy per identity lets kubectl-driven tests act as different users.
 *
 * Invariants: bodies and responses stream both ways (watches keep working); closing the proxy
 * cuts its open connections.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/transport/round_trippers.go (bearerAuthRoundTripper: the header it stands in for)
 * @chapter 03-api-security
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface TokenProxy {
  url: string;
  close(): Promise<void>;
}

export async function startTokenProxy(target: string, token: string): Promise<TokenProxy> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host, authorization: `Bearer ${token}` },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
