import type { INamespace } from 'protobufjs';
export declare const CTXD: INamespace;
export declare const ERROR_DETAILS: INamespace;
