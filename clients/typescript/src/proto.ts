// The ctxd service and the google.rpc error details, made from descriptors generated at
// build time from proto/ (src/gen/descriptors.ts), as are their TypeScript types: nothing
// reads a file at run time, so the package bundles like any other code.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { ProtoGrpcType } from './gen/ctxd.js';
import { CTXD, ERROR_DETAILS } from './gen/descriptors.js';

// The options the generated types were made for (scripts/build.mjs): camelCase fields,
// 64-bit integers as numbers, enums as their names, defaults filled in, oneof names set.
const LOAD_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

let service: ProtoGrpcType | undefined;

/** The generated client constructor for ctxd.v1.ContextService. */
export function contextServiceClient(): new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => ContextServiceClient {
  service ??= grpc.loadPackageDefinition(
    protoLoader.fromJSON(CTXD, LOAD_OPTIONS),
  ) as unknown as ProtoGrpcType;
  return service.ctxd.v1.ContextService;
}

let details: protobuf.Root | undefined;

/** google.rpc.Status and the error details (BadRequest, ErrorInfo, ...). */
export function errorDetailsRoot(): protobuf.Root {
  if (!details) {
    details = protobuf.Root.fromJSON(ERROR_DETAILS);
    details.resolveAll();
  }
  return details;
}
