// The ctxd service and the google.rpc error details, made from descriptors generated at
// build time from proto/ (src/gen/descriptors.ts), as are their TypeScript types: nothing
// reads a file at run time, so the package bundles like any other code.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
import type { ProtoGrpcType } from './gen/ctxd.js';
import { CTXD, ERROR_DETAILS } from './gen/descriptors.js';
import { exactLongs } from './longs.js';

// The options the generated types were made for (scripts/build.mjs): camelCase fields,
// 64-bit integers as numbers (decoded as text, then made exact numbers by exactLongs),
// enums as their names, defaults filled in, oneof names set.
const LOAD_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
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
  service ??= grpc.loadPackageDefinition(exactDefinition()) as unknown as ProtoGrpcType;
  return service.ctxd.v1.ContextService;
}

const SERVICE = 'ctxd.v1.ContextService';

/** The service's definition whose answers carry exact 64-bit numbers (src/longs.ts). */
export function exactDefinition(): protoLoader.PackageDefinition {
  const definition = protoLoader.fromJSON(CTXD, LOAD_OPTIONS);
  const methods = protobuf.Root.fromJSON(CTXD).lookupService(SERVICE);
  methods.resolveAll();
  const service = definition[SERVICE] as protoLoader.ServiceDefinition;
  for (const [name, method] of Object.entries(service)) {
    const type = methods.methods[name]?.resolvedResponseType;
    if (!type) throw new Error(`no response type for ${SERVICE}.${name}`);
    const decode = method.responseDeserialize;
    method.responseDeserialize = (bytes: Buffer) => {
      const message = decode(bytes) as Record<string, unknown>;
      exactLongs(message, type);
      return message;
    };
  }
  return definition;
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
