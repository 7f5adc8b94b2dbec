"""The protocol requests the helpers send, built from their arguments (shared by the
sync and the asyncio client), and the connection settings (TLS, API key)."""

from __future__ import annotations

import datetime
import importlib
import os
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import grpc

from . import convert
from .convert import Format, MessageLike, ToolsLike
from .v1 import ctxd_pb2 as pb



def _find_propagate() -> Any:
    """OpenTelemetry's propagation API, when installed (it is optional)."""
    try:
        return importlib.import_module("opentelemetry.propagate")
    except ImportError:
        return None


_propagate: Any = _find_propagate()

SERVICE = "/ctxd.v1.ContextService/"

# Bytes of an exported file per ImportSession message (under gRPC's 4 MiB default).
IMPORT_CHUNK_BYTES = 1 << 20


def import_chunks(file: bytes, session_id: str) -> list[pb.ImportSessionRequest]:
    """ImportSession's messages for `file`: the id to import as in the first."""
    starts = range(0, max(len(file), 1), IMPORT_CHUNK_BYTES)
    return [
        pb.ImportSessionRequest(session_id=session_id if start == 0 else "", data=file[start : start + IMPORT_CHUNK_BYTES])
        for start in starts
    ]


def import_method(channel: Any) -> Any:
    """ImportSession on `channel` (sync or asyncio): a stream of chunks, one response."""
    return channel.stream_unary(
        SERVICE + "ImportSession",
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=pb.ImportSessionResponse.FromString,
    )


@dataclass(frozen=True)
class Tls:
    """TLS settings: a CA bundle to trust instead of the system's, and a client
    certificate and key for servers that ask for one (all PEM bytes)."""

    root_certificates: Optional[bytes] = None
    certificate_chain: Optional[bytes] = None
    private_key: Optional[bytes] = None


TlsLike = Union[bool, Tls, "grpc.ChannelCredentials", None]


# A loopback target (TLS is off by default there, on elsewhere), as the TypeScript client
# tells it.
LOOPBACK = re.compile(r"^(?:dns:/*)?(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$", re.IGNORECASE)


def credentials(tls: TlsLike, target: str) -> Any:
    """Channel credentials for `tls` (None: plaintext). Unset, TLS with the system's CAs
    unless `target` is a loopback address."""
    if tls is None:
        tls = not LOOPBACK.match(target)
    if tls is False:
        return None
    if tls is True:
        return grpc.ssl_channel_credentials()
    if isinstance(tls, Tls):
        return grpc.ssl_channel_credentials(
            root_certificates=tls.root_certificates,
            private_key=tls.private_key,
            certificate_chain=tls.certificate_chain,
        )
    return tls


def address(target: Optional[str]) -> str:
    """The server's address: `target`, else the CTXD_ADDRESS environment variable."""
    chosen = target or os.environ.get("CTXD_ADDRESS", "")
    if not chosen:
        raise ValueError("target: pass the server's host:port, or set CTXD_ADDRESS")
    return chosen


def api_key_or_env(api_key: Optional[str]) -> Optional[str]:
    """The API key: `api_key`, else the CTXD_API_KEY environment variable, else none."""
    return api_key or os.environ.get("CTXD_API_KEY") or None


def metadata(api_key: Optional[str]) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {api_key}"),) if api_key else ()


# The W3C trace-context headers a call carries.
_TRACE_HEADERS = ("traceparent", "tracestate")


def with_trace(base: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """A call's metadata with the current OpenTelemetry context (W3C `traceparent` and
    `tracestate`) when OpenTelemetry is installed and a span is current: ctxd's spans
    for the call join the caller's trace. Without OpenTelemetry, `base` as it is."""
    if _propagate is None:
        return base
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    found = tuple((name.lower(), value) for name, value in carrier.items() if name.lower() in _TRACE_HEADERS)
    return base + found if found else base


def create_session(
    session_id: str,
    policy: Union[pb.Policy, Mapping[str, Any], None],
    metadata: Optional[Mapping[str, str]],
    parent_session_id: str = "",
    parent_tool_call_id: str = "",
) -> pb.CreateSessionRequest:
    return pb.CreateSessionRequest(
        session_id=session_id,
        policy=convert.policy(policy),
        metadata=dict(metadata or {}),
        parent_session_id=parent_session_id,
        parent_tool_call_id=parent_tool_call_id,
    )


def finish_session(
    session_id: str, final_answer: str, append_to_parent: Optional[bool]
) -> pb.FinishSessionRequest:
    """FinishSession: with no `append_to_parent`, a non-empty answer is appended to the
    parent and an empty one ends the session alone (the server refuses any other mix)."""
    return pb.FinishSessionRequest(
        session_id=session_id,
        final_answer=final_answer,
        append_to_parent=bool(final_answer) if append_to_parent is None else append_to_parent,
    )


def fork_session(
    source_session_id: str,
    session_id: str,
    at_seq: Optional[int],
    policy: Union[pb.Policy, Mapping[str, Any], None],
    metadata: Optional[Mapping[str, str]],
) -> pb.ForkSessionRequest:
    request = pb.ForkSessionRequest(
        source_session_id=source_session_id,
        session_id=session_id,
        policy=convert.policy(policy),
        metadata=dict(metadata or {}),
    )
    if at_seq is not None:
        request.at_seq = at_seq
    return request


def append_turn(
    session_id: str,
    messages: Sequence[MessageLike],
    usage: Union[pb.Usage, Mapping[str, int], None],
    expected_version: Optional[int],
    idempotency_key: str,
) -> pb.AppendTurnRequest:
    if not messages:
        raise ValueError("messages: give at least one message to append")
    request = pb.AppendTurnRequest(
        session_id=session_id,
        messages=[convert.message(m, f"messages[{i}]") for i, m in enumerate(messages)],
        usage=convert.usage(usage),
        idempotency_key=idempotency_key,
    )
    if expected_version is not None:
        request.expected_version = expected_version
    return request


def append_native(
    session_id: str,
    format: Format,
    response_json: str,
    items_json: str,
    expected_version: Optional[int],
    idempotency_key: str,
) -> pb.AppendNativeRequest:
    if format == Format.NEUTRAL:
        raise ValueError("format: NEUTRAL has no native shape; use append() for ctxd messages")
    request = pb.AppendNativeRequest(
        session_id=session_id,
        format=int(format),  # type: ignore[arg-type]
        response_json=response_json,
        items_json=items_json,
        idempotency_key=idempotency_key,
    )
    if expected_version is not None:
        request.expected_version = expected_version
    return request


def build(
    session_id: str,
    format: Format,
    system_prompt: str,
    tools: ToolsLike,
    max_output_tokens: Optional[int],
) -> pb.BuildMessagesRequest:
    request = pb.BuildMessagesRequest(
        session_id=session_id,
        system_prompt=system_prompt,
        tools=convert.tools(tools),
        format=int(format),  # type: ignore[arg-type]
    )
    if max_output_tokens is not None:
        request.max_output_tokens = max_output_tokens
    return request


def built_body(response: pb.BuildMessagesResponse, format: Format) -> Union[dict[str, Any], list[pb.Message]]:
    if format == Format.NEUTRAL:
        return list(response.messages)
    body = json.loads(response.json)
    if not isinstance(body, dict):
        raise ValueError("BuildMessages returned a body that is not a JSON object")
    return body


def check(
    session_id: str,
    system_prompt: str,
    tools: ToolsLike,
    max_output_tokens: Optional[int],
    pending: Sequence[MessageLike],
) -> pb.CheckBudgetRequest:
    request = pb.CheckBudgetRequest(
        session_id=session_id,
        system_prompt=system_prompt,
        tools=convert.tools(tools),
        pending_messages=[convert.message(m, f"pending[{i}]") for i, m in enumerate(pending)],
    )
    if max_output_tokens is not None:
        request.max_output_tokens = max_output_tokens
    return request


def compact(
    session_id: str, mode: int, target_tokens: int, dry_run: bool, wait: bool, wait_timeout_ms: int
) -> pb.CompactRequest:
    return pb.CompactRequest(
        session_id=session_id,
        mode=mode,  # type: ignore[arg-type]
        target_tokens=target_tokens,
        dry_run=dry_run,
        wait=wait,
        wait_timeout_ms=wait_timeout_ms,
    )


def revert_compaction(
    session_id: str,
    event_cursor: Optional[str],
    summary_id: Optional[int],
    dry_run: bool,
    expected_version: Optional[int],
) -> pb.RevertCompactionRequest:
    if (event_cursor is None) == (summary_id is None):
        raise ValueError("revert_compaction: give exactly one of event_cursor or summary_id")
    request = pb.RevertCompactionRequest(session_id=session_id, dry_run=dry_run)
    if event_cursor is not None:
        request.event_cursor = event_cursor
    elif summary_id is not None:
        request.summary_id = summary_id
    if expected_version is not None:
        request.expected_version = expected_version
    return request


def expand(
    session_id: str,
    seqs: Optional[Sequence[int]],
    first_seq: Optional[int],
    last_seq: Optional[int],
    summary_id: Optional[int],
    max_tokens: int,
) -> pb.ExpandRequest:
    chosen = sum(x is not None for x in (seqs, first_seq, summary_id))
    if chosen != 1:
        raise ValueError("expand: give exactly one of seqs, first_seq (with last_seq) or summary_id")
    request = pb.ExpandRequest(session_id=session_id, max_tokens=max_tokens)
    if seqs is not None:
        request.list.seqs.extend(seqs)
    elif first_seq is not None:
        if last_seq is None:
            raise ValueError("expand: last_seq is required with first_seq")
        request.range.first_seq = first_seq
        request.range.last_seq = last_seq
    elif summary_id is not None:
        request.summary_id = summary_id
    return request


def search(
    session_id: str,
    query: str,
    roles: Sequence[int],
    scope: int,
    limit: int,
    tree_root_session_id: str = "",
    since: Optional[datetime.datetime] = None,
    until: Optional[datetime.datetime] = None,
) -> pb.SearchRequest:
    request = pb.SearchRequest(
        session_id=session_id,
        query=query,
        roles=list(roles),  # type: ignore[arg-type]
        scope=scope,  # type: ignore[arg-type]
        limit=limit,
        tree_root_session_id=tree_root_session_id,
    )
    for field, at in (("since", since), ("until", until)):
        if at is not None:
            getattr(request, field).FromDatetime(at)
    return request


# A todo's status by name, as UpdateLedger takes it.
TODO_STATUSES = {
    "pending": pb.TODO_STATUS_PENDING,
    "in_progress": pb.TODO_STATUS_IN_PROGRESS,
    "done": pb.TODO_STATUS_DONE,
}

LedgerTodoLike = Union[pb.LedgerTodo, Mapping[str, Any]]
LedgerNoteLike = Union[pb.LedgerNote, Mapping[str, Any]]


def _todo(value: LedgerTodoLike, where: str) -> pb.LedgerTodo:
    if isinstance(value, pb.LedgerTodo):
        return value
    status = value.get("status", 0)
    if isinstance(status, str):
        if status not in TODO_STATUSES:
            raise ValueError(f"{where}.status: one of {', '.join(TODO_STATUSES)}, got {status[:64]!r}")
        status = TODO_STATUSES[status]
    return pb.LedgerTodo(id=str(value.get("id", "")), text=str(value.get("text", "")), status=status)


def _note(value: LedgerNoteLike) -> pb.LedgerNote:
    if isinstance(value, pb.LedgerNote):
        return value
    return pb.LedgerNote(id=str(value.get("id", "")), text=str(value.get("text", "")))


def update_ledger(
    session_id: str, todos: Sequence[LedgerTodoLike], notes: Sequence[LedgerNoteLike]
) -> pb.UpdateLedgerRequest:
    """An UpdateLedger request; a todo or note as its message or a mapping (`id`, `text`,
    and a todo's `status` as its enum value or "pending", "in_progress", "done")."""
    return pb.UpdateLedgerRequest(
        session_id=session_id,
        todos=[_todo(todo, f"todos[{index}]") for index, todo in enumerate(todos)],
        notes=[_note(note) for note in notes],
    )


def list_sessions(
    page_size: int,
    page_token: str,
    metadata: Optional[Mapping[str, str]],
    parent_session_id: str,
    forked_from_session_id: str,
    finished: Optional[bool],
    created_after: Optional[datetime.datetime],
    created_before: Optional[datetime.datetime],
    updated_after: Optional[datetime.datetime],
    updated_before: Optional[datetime.datetime],
) -> pb.ListSessionsRequest:
    request = pb.ListSessionsRequest(
        page_size=page_size,
        page_token=page_token,
        metadata=dict(metadata or {}),
        parent_session_id=parent_session_id,
        forked_from_session_id=forked_from_session_id,
    )
    if finished is not None:
        request.finished = finished
    for field, at in (
        ("created_after", created_after),
        ("created_before", created_before),
        ("updated_after", updated_after),
        ("updated_before", updated_before),
    ):
        if at is not None:
            getattr(request, field).FromDatetime(at)
    return request


def subscribe(
    session_id: str,
    kinds: Sequence[int],
    after: str,
    from_now: bool,
    heartbeat_interval_ms: int,
    tree_root_session_id: str = "",
) -> pb.SubscribeEventsRequest:
    return pb.SubscribeEventsRequest(
        session_id=session_id,
        kinds=list(kinds),  # type: ignore[arg-type]
        after=after,
        from_now=from_now and not after,
        heartbeat_interval_ms=heartbeat_interval_ms,
        tree_root_session_id=tree_root_session_id,
    )
