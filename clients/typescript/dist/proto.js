// The ctxd service and the google.rpc error details, made from descriptors generated at
// build time from proto/ (src/gen/descriptors.ts), as are their TypeScript types: nothing
// reads a file at run time, so the package bundles like any other code.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { CTXD, ERROR_DETAILS } from './gen/descriptors.js';
// The options the generated types were made for (scripts/build.mjs): camelCase fields,
// 64-bit integers as numbers, enums as their names, defaults filled in, oneof names set.
const LOAD_OPTIONS = {
    keepCase: false,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
};
let service;
/** The generated client constructor for ctxd.v1.ContextService. */
export function contextServiceClient() {
    service ??= grpc.loadPackageDefinition(protoLoader.fromJSON(CTXD, LOAD_OPTIONS));
    return service.ctxd.v1.ContextService;
}
let details;
/** google.rpc.Status and the error details (BadRequest, ErrorInfo, ...). */
export function errorDetailsRoot() {
    if (!details) {
        details = protobuf.Root.fromJSON(ERROR_DETAILS);
        details.resolveAll();
    }
    return details;
}
