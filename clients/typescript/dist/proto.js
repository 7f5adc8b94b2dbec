// The ctxd service and the google.rpc error details, made from descriptors generated at
// build time from proto/ (src/gen/descriptors.ts), as are their TypeScript types: nothing
// reads a file at run time, so the package bundles like any other code.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { CTXD, ERROR_DETAILS } from './gen/descriptors.js';
import { exactLongs } from './longs.js';
// The options the generated types were made for (scripts/build.mjs): camelCase fields,
// 64-bit integers as numbers (decoded as text, then made exact numbers by exactLongs),
// enums as their names, defaults filled in, oneof names set.
const LOAD_OPTIONS = {
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
};
let service;
/** The generated client constructor for ctxd.v1.ContextService. */
export function contextServiceClient() {
    service ??= grpc.loadPackageDefinition(exactDefinition());
    return service.ctxd.v1.ContextService;
}
const SERVICE = 'ctxd.v1.ContextService';
/** The service's definition whose answers carry exact 64-bit numbers (src/longs.ts). */
export function exactDefinition() {
    const definition = protoLoader.fromJSON(CTXD, LOAD_OPTIONS);
    const methods = protobuf.Root.fromJSON(CTXD).lookupService(SERVICE);
    methods.resolveAll();
    const service = definition[SERVICE];
    for (const [name, method] of Object.entries(service)) {
        const type = methods.methods[name]?.resolvedResponseType;
        if (!type)
            throw new Error(`no response type for ${SERVICE}.${name}`);
        const decode = method.responseDeserialize;
        method.responseDeserialize = (bytes) => {
            const message = decode(bytes);
            exactLongs(message, type);
            return message;
        };
    }
    return definition;
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
