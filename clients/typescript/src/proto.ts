// The ctxd service and the google.rpc error details, loaded at run time from the .proto
// files shipped in the package's proto/ folder. Their TypeScript types are generated from
// the same files at build time (src/gen/).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { ProtoGrpcType } from './gen/ctxd.js';

/** The package's proto/ folder (next to dist/ and src/). */
export const PROTO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'proto');

// The options the generated types were made for (scripts/build.mjs): camelCase fields,
// 64-bit integers as numbers, enums as their names, defaults filled in, oneof names set.
const LOAD_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

let service: ProtoGrpcType | undefined;

/** The generated client constructor for ctxd.v1.ContextService. */
export function contextServiceClient(): new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => ContextServiceClient {
  service ??= grpc.loadPackageDefinition(
    protoLoader.loadSync('ctxd/v1/ctxd.proto', LOAD_OPTIONS),
  ) as unknown as ProtoGrpcType;
  return service.ctxd.v1.ContextService;
}

let details: protobuf.Root | undefined;

/** google.rpc.Status and the error details (BadRequest, ErrorInfo, ...). */
export function errorDetailsRoot(): protobuf.Root {
  if (!details) {
    const root = new protobuf.Root();
    // google/protobuf/{any,duration}.proto are built into protobufjs.
    root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : path.join(PROTO_DIR, target));
    root.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
    root.resolveAll();
    details = root;
  }
  return details;
}
