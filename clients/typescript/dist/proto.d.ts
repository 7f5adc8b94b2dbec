import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { ContextServiceClient } from './gen/ctxd/v1/ContextService.js';
/** The generated client constructor for ctxd.v1.ContextService. */
export declare function contextServiceClient(): new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => ContextServiceClient;
/** The service's definition whose answers carry exact 64-bit numbers (src/longs.ts). */
export declare function exactDefinition(): protoLoader.PackageDefinition;
/** google.rpc.Status and the error details (BadRequest, ErrorInfo, ...). */
export declare function errorDetailsRoot(): protobuf.Root;
