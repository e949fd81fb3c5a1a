/**
 * etcdserverpb — etcd's gRPC API loaded from its .proto files, once, for everyone who speaks it.
 *
 * Solves:
 * - our gRPC server (v3rpc/), the API server's etcd client (apiserver/storage/etcd-client.ts) and
 *   the differential harness against the real etcd (testing/) must read and write the same bytes
 *   the same way; etcd gets that from one generated Go package, `etcdserverpb` (rpc.pb.go, made by
 *   protoc from rpc.proto). We load rpc.proto (which imports mvccpb/kv.proto) at run time instead,
 *   here, with one set of decoding options, and every user takes its services from this module;
 * - the decoding options make a decoded message *be* an rpc.ts type: camelCase field names, enums
 *   as their names, int64 as numbers (our revisions and lease ids stay below 2^53; a larger value
 *   from a client only loses precision where it is out of range anyway), bytes as Buffers (which
 *   are Uint8Arrays), every field present with its proto3 default. Encoding accepts the same
 *   shapes, and bigint for the uint64 ids.
 *
 * Invariants:
 * - rpc.proto is parsed at most once per process: the gRPC package definition and the protobufjs
 *   root are each built on first use and kept.
 *
 * @upstream etcd-io/etcd api/etcdserverpb/rpc.pb.go (the generated package: KVServer, KVClient, ...)
 * @upstream etcd-io/etcd api/etcdserverpb/rpc.proto (service KV, Watch, Lease, Cluster, Maintenance)
 * @chapter 01-etcd-watch
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

/** The directory the .proto imports resolve from: it holds etcdserverpb/ and mvccpb/. */
export const protoDir = fileURLToPath(new URL("../", import.meta.url));

const rpcProto = "etcdserverpb/rpc.proto";

/** How every user of this module decodes etcd's messages (see the header). */
export const loaderOptions: protoLoader.Options = {
  includeDirs: [protoDir],
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The services of etcd's v3 API that this course serves or calls (not Auth). */
export type EtcdService = "KV" | "Watch" | "Lease" | "Cluster" | "Maintenance";

let services: Record<EtcdService, grpc.ServiceClientConstructor> | undefined;

/**
 * The services: each is a gRPC client constructor (`new KV(address, credentials)`), and its
 * `.service` is the service definition a server registers (`server.addService(KV.service, …)`).
 */
export function etcdserverpb(): Record<EtcdService, grpc.ServiceClientConstructor> {
  if (!services) {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(rpcProto, loaderOptions));
    const ns = pkg.etcdserverpb as Record<EtcdService, grpc.ServiceClientConstructor>;
    services = {
      KV: ns.KV,
      Watch: ns.Watch,
      Lease: ns.Lease,
      Cluster: ns.Cluster,
      Maintenance: ns.Maintenance,
    };
  }
  return services;
}

let root: protobuf.Root | undefined;

/**
 * The same .proto as a protobufjs root, for code that encodes messages by hand (the Watch
 * response encoder, v3rpc/watch.ts): `protobufRoot().lookupType("etcdserverpb.WatchResponse")`.
 */
export function protobufRoot(): protobuf.Root {
  if (!root) {
    const r = new protobuf.Root();
    r.resolvePath = (_origin, target) => join(protoDir, target);
    r.loadSync(rpcProto, { keepCase: false });
    r.resolveAll();
    root = r;
  }
  return root;
}
