// Errors as classes: every failed call throws a CtxdError (or a subclass for the codes a
// caller acts on), with what the server put in the google.rpc.Status details of the
// `grpc-status-details-bin` trailer decoded into fields.
import * as grpc from '@grpc/grpc-js';
import { errorDetailsRoot } from './proto.js';
/** Any failed ctxd call. */
export class CtxdError extends Error {
    /** The gRPC status code (grpc.status). */
    code;
    /** The status code's name, e.g. "INVALID_ARGUMENT". */
    codeName;
    /** The server's message. */
    details;
    statusDetails;
    constructor(code, details, statusDetails = emptyDetails()) {
        super(`${grpc.status[code] ?? code}: ${details}`);
        this.name = new.target.name;
        this.code = code;
        this.codeName = grpc.status[code] ?? String(code);
        this.details = details;
        this.statusDetails = statusDetails;
    }
}
/** INVALID_ARGUMENT: `violations` name each rejected field and why. */
export class InvalidArgumentError extends CtxdError {
    get violations() {
        return this.statusDetails.badRequest;
    }
}
/** ABORTED: expected_version did not match; `currentVersion` is the session's version. */
export class ConflictError extends CtxdError {
    get currentVersion() {
        const value = this.statusDetails.errorInfo?.metadata['current_version'];
        return value === undefined ? undefined : Number(value);
    }
}
/**
 * FAILED_PRECONDITION: the session's state refuses the request. `field` names the request
 * field whose state refused it (e.g. `session_id` of a finished session,
 * `append_to_parent` when the parent's tool call was answered meanwhile); '' when the
 * server named none.
 */
export class FailedPreconditionError extends CtxdError {
    get field() {
        return this.statusDetails.preconditionViolations[0]?.subject ?? '';
    }
}
/**
 * FAILED_PRECONDITION (ErrorInfo reason DOES_NOT_FIT): the request cannot fit the window.
 * `breakdown` has the server's figures in tokens (system_tokens, tool_tokens,
 * newest_turn_tokens, output_reserve_tokens, available_tokens, context_window_tokens).
 */
export class DoesNotFitError extends FailedPreconditionError {
    get breakdown() {
        const metadata = this.statusDetails.errorInfo?.metadata ?? {};
        return Object.fromEntries(Object.entries(metadata).map(([name, value]) => [name, Number(value)]));
    }
}
/** NOT_FOUND: no such session (or job) for this tenant. */
export class NotFoundError extends CtxdError {
}
/** ALREADY_EXISTS: the session id is taken. */
export class AlreadyExistsError extends CtxdError {
}
/** UNAUTHENTICATED: no API key, or one the server does not know. */
export class UnauthenticatedError extends CtxdError {
}
/** RESOURCE_EXHAUSTED: a server limit or the tenant's quota; `retryDelayMs` when known. */
export class ResourceExhaustedError extends CtxdError {
    get retryDelayMs() {
        return this.statusDetails.retryDelayMs;
    }
    get violations() {
        return this.statusDetails.quotaViolations;
    }
}
/** UNAVAILABLE: the server could not be reached (after the client's retries). */
export class UnavailableError extends CtxdError {
}
/** OUT_OF_RANGE: e.g. events after the cursor were already pruned. */
export class OutOfRangeError extends CtxdError {
}
/** PERMISSION_DENIED: the key may not do this. */
export class PermissionDeniedError extends CtxdError {
}
/** DEADLINE_EXCEEDED: the call's deadline passed before an answer. */
export class DeadlineExceededError extends CtxdError {
}
function emptyDetails() {
    return { badRequest: [], errorInfo: undefined, preconditionViolations: [], quotaViolations: [], retryDelayMs: undefined };
}
// A trailer larger than this is not decoded (the server sends well under 16 KiB).
const MAX_DETAILS_BYTES = 64 * 1024;
/** The details of the `grpc-status-details-bin` trailer; empty ones when absent or unreadable. */
export function decodeStatusDetails(metadata) {
    const out = emptyDetails();
    const raw = metadata?.get('grpc-status-details-bin')[0];
    if (!(raw instanceof Buffer) || raw.length > MAX_DETAILS_BYTES)
        return out;
    const root = errorDetailsRoot();
    let status;
    try {
        status = root.lookupType('google.rpc.Status').toObject(root.lookupType('google.rpc.Status').decode(raw), {
            defaults: true,
        });
    }
    catch {
        return out;
    }
    for (const any of status.details ?? []) {
        const url = any.typeUrl ?? any.type_url ?? '';
        const typeName = url.slice(url.lastIndexOf('/') + 1);
        if (!typeName.startsWith('google.rpc.') || !any.value)
            continue;
        let detail;
        try {
            const type = root.lookupType(typeName);
            detail = type.toObject(type.decode(any.value), { defaults: true, longs: Number });
        }
        catch {
            continue;
        }
        if (typeName === 'google.rpc.BadRequest') {
            for (const v of detail['fieldViolations'] ?? []) {
                out.badRequest.push({ field: v.field, description: v.description });
            }
        }
        else if (typeName === 'google.rpc.ErrorInfo') {
            out.errorInfo = {
                reason: String(detail['reason'] ?? ''),
                domain: String(detail['domain'] ?? ''),
                metadata: { ...(detail['metadata'] ?? {}) },
            };
        }
        else if (typeName === 'google.rpc.PreconditionFailure') {
            for (const v of detail['violations'] ?? []) {
                out.preconditionViolations.push({ type: v.type, subject: v.subject, description: v.description });
            }
        }
        else if (typeName === 'google.rpc.QuotaFailure') {
            for (const v of detail['violations'] ?? []) {
                out.quotaViolations.push({ subject: v.subject, description: v.description });
            }
        }
        else if (typeName === 'google.rpc.RetryInfo') {
            const delay = detail['retryDelay'];
            if (delay)
                out.retryDelayMs = Number(delay.seconds ?? 0) * 1000 + Math.round(Number(delay.nanos ?? 0) / 1e6);
        }
    }
    return out;
}
const CLASSES = {
    [grpc.status.INVALID_ARGUMENT]: InvalidArgumentError,
    [grpc.status.ABORTED]: ConflictError,
    [grpc.status.FAILED_PRECONDITION]: FailedPreconditionError,
    [grpc.status.NOT_FOUND]: NotFoundError,
    [grpc.status.ALREADY_EXISTS]: AlreadyExistsError,
    [grpc.status.UNAUTHENTICATED]: UnauthenticatedError,
    [grpc.status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
    [grpc.status.UNAVAILABLE]: UnavailableError,
    [grpc.status.OUT_OF_RANGE]: OutOfRangeError,
    [grpc.status.PERMISSION_DENIED]: PermissionDeniedError,
    [grpc.status.DEADLINE_EXCEEDED]: DeadlineExceededError,
};
/** The CtxdError for a grpc-js failure. */
export function fromServiceError(error) {
    const details = decodeStatusDetails(error.metadata);
    const Class = error.code === grpc.status.FAILED_PRECONDITION && details.errorInfo?.reason === 'DOES_NOT_FIT'
        ? DoesNotFitError
        : (CLASSES[error.code] ?? CtxdError);
    return new Class(error.code, error.details, details);
}
