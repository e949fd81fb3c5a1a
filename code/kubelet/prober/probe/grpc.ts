/**
 * The gRPC probe — one call of the standard health service, `grpc.health.v1.Health/Check`, and
 * its answer judged: SERVING is success, anything else (or no answer) is failure.
 * Mirrors kubernetes/kubernetes pkg/probe/grpc/grpc.go.
 *
 * Solves:
 * - a gRPC server has no URL to GET: Kubernetes asks it the way grpc_health_probe does, through
 *   the health-checking protocol every gRPC library ships, naming a `service` ("" = the server);
 * - a server that cannot be reached within the probe's timeout, one that does not implement the
 *   protocol, and one that answers NOT_SERVING are three different failures, each with its own
 *   output in the event, as upstream's.
 *
 * Invariants:
 * - every outcome is a result, never an error: "any failure is considered as a probe failure to
 *   mimic grpc_health_probe" (upstream's comment), so a gRPC probe is never retried as an error;
 * - the whole probe — connecting and the call — fits in one timeout (the Go context's deadline);
 * - connecting blocks until the server answers or the timeout passes (Go's grpc.WithBlock), so a
 *   refused connection reads as a timeout, as upstream's does;
 * - messages name the address probed (the pod's IP), also when `dial` sends the bytes elsewhere.
 *
 * What upstream does differently: the messages come from Go's gRPC library (`%+v` of its errors);
 * ours from grpc-js, so the text after the colon differs.
 *
 * @upstream kubernetes/kubernetes pkg/probe/grpc/grpc.go (grpcProber.Probe)
 * @upstream grpc/grpc-proto grpc/health/v1/health.proto (HealthCheckRequest, HealthCheckResponse.ServingStatus)
 * @chapter 07-kubelet
 */
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { probeUserAgent } from "./http.ts";
import { type Dial, joinHostPort, type ProbeOutcome } from "./probe.ts";

// health.proto's two messages, declared here rather than loaded from a .proto file.
const root = protobuf.Root.fromJSON({
  nested: {
    grpc: {
      nested: {
        health: {
          nested: {
            v1: {
              nested: {
                HealthCheckRequest: { fields: { service: { type: "string", id: 1 } } },
                HealthCheckResponse: {
                  fields: { status: { type: "ServingStatus", id: 1 } },
                  nested: {
                    ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
});
const HealthCheckRequest = root.lookupType("grpc.health.v1.HealthCheckRequest");
const HealthCheckResponse = root.lookupType("grpc.health.v1.HealthCheckResponse");

export type ServingStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";

/** The Health service's one unary method, for a client and (in tests, images) a server. */
export const healthService: grpc.ServiceDefinition = {
  Check: {
    path: "/grpc.health.v1.Health/Check",
    requestStream: false,
    responseStream: false,
    requestSerialize: (req: { service: string }) => Buffer.from(HealthCheckRequest.encode(req).finish()),
    requestDeserialize: (buf: Buffer) => HealthCheckRequest.toObject(HealthCheckRequest.decode(buf)),
    responseSerialize: (res: { status: ServingStatus }) =>
      Buffer.from(HealthCheckResponse.encode(HealthCheckResponse.fromObject(res)).finish()),
    responseDeserialize: (buf: Buffer) =>
      HealthCheckResponse.toObject(HealthCheckResponse.decode(buf), { enums: String, defaults: true }),
  },
};

const HealthClient = grpc.makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

/** Go's time.Duration text for a timeout: 1s, 1.5s, 500ms. */
function goDuration(ms: number): string {
  return ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`;
}

// #region do-grpc-probe
export function doGRPCProbe(
  host: string,
  service: string,
  port: number,
  timeoutMs: number,
  dial?: Dial,
): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const target = dial ? dial(host, port) : { host, port };
  const deadline = new Date(Date.now() + timeoutMs);
  const timedOut = (why: string): ProbeOutcome => ({
    result: "failure",
    output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${goDuration(timeoutMs)}: ${why}`,
  });
  // Nothing listens at a pod address the pod network does not know: as a blocking dial, a timeout.
  if (!target)
    return new Promise((r) => setTimeout(() => r(timedOut("context deadline exceeded")), timeoutMs));
  const client = new HealthClient(joinHostPort(target.host, target.port), grpc.credentials.createInsecure(), {
    "grpc.primary_user_agent": probeUserAgent,
    "grpc.default_authority": addr,
  });
  return new Promise<ProbeOutcome>((resolve) => {
    client.waitForReady(deadline, (connectErr) => {
      if (connectErr) return resolve(timedOut("context deadline exceeded"));
      const check = client.Check as unknown as (
        req: { service: string },
        opts: grpc.CallOptions,
        cb: (err: grpc.ServiceError | null, res?: { status: ServingStatus }) => void,
      ) => void;
      check.call(client, { service }, { deadline }, (err, res) => {
        if (err) {
          if (err.code === grpc.status.UNIMPLEMENTED)
            return resolve({
              result: "failure",
              output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`,
            });
          if (err.code === grpc.status.DEADLINE_EXCEEDED)
            return resolve({
              result: "failure",
              output: `timeout: health rpc did not complete within ${goDuration(timeoutMs)}`,
            });
          return resolve({ result: "failure", output: `error: health rpc probe failed: ${err.message}` });
        }
        if (res?.status !== "SERVING")
          return resolve({
            result: "failure",
            output: `service unhealthy (responded with ${JSON.stringify(res?.status)})`,
          });
        resolve({ result: "success", output: "service healthy" });
      });
    });
  }).finally(() => client.close());
}
// #endregion do-grpc-probe
