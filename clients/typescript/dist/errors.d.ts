import * as grpc from '@grpc/grpc-js';
/** One field the server rejected: its name (a JSON path for native bodies) and why. */
export interface FieldViolation {
    field: string;
    description: string;
}
/** The google.rpc.ErrorInfo detail, when the server sent one. */
export interface ErrorInfo {
    reason: string;
    domain: string;
    metadata: Record<string, string>;
}
/** One google.rpc.QuotaFailure violation: which limit, and what happened. */
export interface QuotaViolation {
    subject: string;
    description: string;
}
/** One google.rpc.PreconditionFailure violation: `subject` names the request field whose state refused it. */
export interface PreconditionViolation {
    type: string;
    subject: string;
    description: string;
}
/** The decoded details of a failed call. */
export interface StatusDetails {
    badRequest: FieldViolation[];
    errorInfo: ErrorInfo | undefined;
    preconditionViolations: PreconditionViolation[];
    quotaViolations: QuotaViolation[];
    /** google.rpc.RetryInfo's delay in milliseconds, when sent. */
    retryDelayMs: number | undefined;
}
/** Any failed ctxd call. */
export declare class CtxdError extends Error {
    /** The gRPC status code (grpc.status). */
    readonly code: grpc.status;
    /** The status code's name, e.g. "INVALID_ARGUMENT". */
    readonly codeName: string;
    /** The server's message. */
    readonly details: string;
    readonly statusDetails: StatusDetails;
    constructor(code: grpc.status, details: string, statusDetails?: StatusDetails);
}
/** INVALID_ARGUMENT: `violations` name each rejected field and why. */
export declare class InvalidArgumentError extends CtxdError {
    get violations(): FieldViolation[];
}
/** ABORTED: expected_version did not match; `currentVersion` is the session's version. */
export declare class ConflictError extends CtxdError {
    get currentVersion(): number | undefined;
}
/**
 * FAILED_PRECONDITION: the session's state refuses the request. `field` names the request
 * field whose state refused it (e.g. `session_id` of a finished session,
 * `append_to_parent` when the parent's tool call was answered meanwhile); '' when the
 * server named none.
 */
export declare class FailedPreconditionError extends CtxdError {
    get field(): string;
}
/**
 * FAILED_PRECONDITION (ErrorInfo reason DOES_NOT_FIT): the request cannot fit the window.
 * `breakdown` has the server's figures in tokens (system_tokens, tool_tokens,
 * newest_turn_tokens, output_reserve_tokens, available_tokens, context_window_tokens).
 */
export declare class DoesNotFitError extends FailedPreconditionError {
    get breakdown(): Record<string, number>;
}
/** NOT_FOUND: no such session (or job) for this tenant. */
export declare class NotFoundError extends CtxdError {
}
/** ALREADY_EXISTS: the session id is taken. */
export declare class AlreadyExistsError extends CtxdError {
}
/** UNAUTHENTICATED: no API key, or one the server does not know. */
export declare class UnauthenticatedError extends CtxdError {
}
/** RESOURCE_EXHAUSTED: a server limit or the tenant's quota; `retryDelayMs` when known. */
export declare class ResourceExhaustedError extends CtxdError {
    get retryDelayMs(): number | undefined;
    get violations(): QuotaViolation[];
}
/** UNAVAILABLE: the server could not be reached (after the client's retries). */
export declare class UnavailableError extends CtxdError {
}
/** OUT_OF_RANGE: e.g. events after the cursor were already pruned. */
export declare class OutOfRangeError extends CtxdError {
}
/** PERMISSION_DENIED: the key may not do this. */
export declare class PermissionDeniedError extends CtxdError {
}
/** DEADLINE_EXCEEDED: the call's deadline passed before an answer. */
export declare class DeadlineExceededError extends CtxdError {
}
/** The details of the `grpc-status-details-bin` trailer; empty ones when absent or unreadable. */
export declare function decodeStatusDetails(metadata: grpc.Metadata | undefined): StatusDetails;
/** The CtxdError for a grpc-js failure. */
export declare function fromServiceError(error: grpc.ServiceError): CtxdError;
