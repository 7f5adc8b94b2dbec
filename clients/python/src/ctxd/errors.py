"""ctxd's errors as exceptions, with the google.rpc details the server sends.

Every failed call raises a `CtxdError`; the subclass says what went wrong and carries
what a caller can act on: the field violations of a rejected request, the current
version after a version conflict, the budget figures of a request that cannot fit, the
delay after which a quota has room again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import grpc
from google.protobuf import any_pb2
# googleapis-common-protos ships no py.typed, and types-protobuf's `google` stubs hide
# its modules from mypy: they are Any here, and what is read from them is converted.
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

# The trailer holding the serialized google.rpc.Status.
_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class FieldViolation:
    """One field of a rejected request: its name (a JSON path for native bodies, e.g.
    `response_json: $.choices[0].message.tool_calls[1].id`) and what is wrong with it."""

    field: str
    description: str


@dataclass(frozen=True)
class QuotaViolation:
    """A limit that was reached: its name and the server's sentence about it."""

    subject: str
    description: str


class CtxdError(Exception):
    """A call to ctxd failed. `code` is the gRPC status code, `message` the server's
    sentence, `reason` the ErrorInfo reason when there is one (e.g. VERSION_MISMATCH)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        metadata: Optional[dict[str, str]] = None,
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata: dict[str, str] = dict(metadata or {})


class InvalidArgument(CtxdError):
    """INVALID_ARGUMENT: `violations` names each offending field."""

    def __init__(self, code: grpc.StatusCode, message: str, violations: list[FieldViolation]) -> None:
        super().__init__(code, message)
        self.violations = violations


class NotFound(CtxdError):
    """NOT_FOUND: no such session or job for this tenant."""


class AlreadyExists(CtxdError):
    """ALREADY_EXISTS: the session id is taken."""


class Conflict(CtxdError):
    """ABORTED: the session's version is not `expected_version`; `current_version` is the
    one it has now."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str,
        metadata: dict[str, str],
        current_version: Optional[int],
    ) -> None:
        super().__init__(code, message, reason=reason, metadata=metadata)
        self.current_version = current_version


# The gRPC name of the code; the same class.
Aborted = Conflict


class FailedPrecondition(CtxdError):
    """FAILED_PRECONDITION. `field` names the request field whose state refused it (e.g.
    `session_id` of a finished session, `append_to_parent` when the parent's tool call
    was answered meanwhile), from the PreconditionFailure detail; "" when there is none."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        metadata: Optional[dict[str, str]] = None,
        field: str = "",
    ) -> None:
        super().__init__(code, message, reason=reason, metadata=metadata)
        self.field = field


class DoesNotFit(FailedPrecondition):
    """The request cannot fit the window whatever is left out. `breakdown` has the figures
    in tokens: system_tokens, tool_tokens, newest_turn_tokens, output_reserve_tokens,
    available_tokens, context_window_tokens."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str,
        metadata: dict[str, str],
        breakdown: dict[str, int],
    ) -> None:
        super().__init__(code, message, reason=reason, metadata=metadata)
        self.breakdown = breakdown


class Unauthenticated(CtxdError):
    """UNAUTHENTICATED: no API key, or one the server does not know."""


class PermissionDenied(CtxdError):
    """PERMISSION_DENIED."""


class ResourceExhausted(CtxdError):
    """RESOURCE_EXHAUSTED: a server limit or the tenant's quota. `retry_delay_s` is when
    the quota has room again (None when waiting does not help), `violations` names the
    limits."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        retry_delay_s: Optional[float],
        violations: list[QuotaViolation],
    ) -> None:
        super().__init__(code, message)
        self.retry_delay_s = retry_delay_s
        self.violations = violations


class OutOfRange(CtxdError):
    """OUT_OF_RANGE: e.g. an events cursor whose successors were pruned."""


class Unavailable(CtxdError):
    """UNAVAILABLE: the server or its database could not be reached (after the client's
    retries)."""


class DeadlineExceeded(CtxdError):
    """DEADLINE_EXCEEDED: the call's timeout passed."""


def _unpack(details: list[any_pb2.Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for detail in details:
        for name, kind in (
            ("bad_request", error_details_pb2.BadRequest),
            ("error_info", error_details_pb2.ErrorInfo),
            ("retry_info", error_details_pb2.RetryInfo),
            ("quota_failure", error_details_pb2.QuotaFailure),
            ("precondition_failure", error_details_pb2.PreconditionFailure),
        ):
            message = kind()
            if detail.Is(message.DESCRIPTOR):
                detail.Unpack(message)
                found[name] = message
    return found


def _status_details(trailers: Any) -> list[any_pb2.Any]:
    for key, value in trailers or ():
        if key == _DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status()
            try:
                status.ParseFromString(value)
            except Exception:  # a malformed trailer: the code and message still stand
                return []
            return list(status.details)
    return []


def from_rpc_error(error: grpc.RpcError) -> CtxdError:
    """The exception for a failed call (sync `grpc.RpcError` or `grpc.aio.AioRpcError`),
    with the gRPC error as its cause."""
    converted = _convert(error)
    converted.__cause__ = error
    return converted


def _convert(error: grpc.RpcError) -> CtxdError:
    code: grpc.StatusCode = error.code()
    message = str(error.details() or "")
    found = _unpack(_status_details(error.trailing_metadata()))
    info = found.get("error_info")
    reason = str(info.reason) if info is not None else ""
    metadata = {str(k): str(v) for k, v in info.metadata.items()} if info is not None else {}
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        bad = found.get("bad_request")
        violations = (
            [FieldViolation(v.field, v.description) for v in bad.field_violations] if bad is not None else []
        )
        return InvalidArgument(code, message, violations)
    if code == grpc.StatusCode.ABORTED:
        return Conflict(
            code,
            message,
            reason=reason,
            metadata=metadata,
            current_version=_int(metadata.get("current_version")),
        )
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        if reason == "DOES_NOT_FIT":
            breakdown = {name: value for name, value in ((k, _int(v)) for k, v in metadata.items()) if value is not None}
            return DoesNotFit(code, message, reason=reason, metadata=metadata, breakdown=breakdown)
        failure = found.get("precondition_failure")
        field = str(failure.violations[0].subject) if failure is not None and failure.violations else ""
        return FailedPrecondition(code, message, reason=reason, metadata=metadata, field=field)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        retry = found.get("retry_info")
        delay = retry.retry_delay.ToTimedelta().total_seconds() if retry is not None else None
        quota = found.get("quota_failure")
        quota_violations = (
            [QuotaViolation(v.subject, v.description) for v in quota.violations] if quota is not None else []
        )
        return ResourceExhausted(code, message, retry_delay_s=delay, violations=quota_violations)
    simple: dict[grpc.StatusCode, type[CtxdError]] = {
        grpc.StatusCode.NOT_FOUND: NotFound,
        grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
        grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
        grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
        grpc.StatusCode.OUT_OF_RANGE: OutOfRange,
        grpc.StatusCode.UNAVAILABLE: Unavailable,
        grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    }
    return simple.get(code, CtxdError)(code, message, reason=reason, metadata=metadata)


def _int(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None
