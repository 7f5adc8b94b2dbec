"""Typed results: what the helpers return, as frozen dataclasses with Python enums, made
from the protocol's messages by one converter that reads each dataclass's own fields.
Field names are the protocol's, so code written against the messages reads the same.
The message itself stays reachable as `.raw` where a caller needs a field not modelled."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
from typing import Any, Optional, TypeVar

from google.protobuf.message import Message as PbMessage
from google.protobuf.timestamp_pb2 import Timestamp

from .v1 import ctxd_pb2 as _pb


class BudgetStatus(enum.IntEnum):
    UNSPECIFIED = _pb.BUDGET_STATUS_UNSPECIFIED
    OK = _pb.BUDGET_STATUS_OK
    WARN = _pb.BUDGET_STATUS_WARN
    OVER = _pb.BUDGET_STATUS_OVER


class RecommendedAction(enum.IntEnum):
    UNSPECIFIED = _pb.RECOMMENDED_ACTION_UNSPECIFIED
    NONE = _pb.RECOMMENDED_ACTION_NONE
    CLEAR_TOOL_RESULTS = _pb.RECOMMENDED_ACTION_CLEAR_TOOL_RESULTS
    SUMMARIZE = _pb.RECOMMENDED_ACTION_SUMMARIZE
    TRIM_OLDEST_TURNS = _pb.RECOMMENDED_ACTION_TRIM_OLDEST_TURNS
    REDUCE_REQUEST = _pb.RECOMMENDED_ACTION_REDUCE_REQUEST


class EstimateSource(enum.IntEnum):
    UNSPECIFIED = _pb.ESTIMATE_SOURCE_UNSPECIFIED
    ANCHORED = _pb.ESTIMATE_SOURCE_ANCHORED
    TOKENIZER = _pb.ESTIMATE_SOURCE_TOKENIZER
    CALIBRATED = _pb.ESTIMATE_SOURCE_CALIBRATED


class Role(enum.IntEnum):
    UNSPECIFIED = _pb.ROLE_UNSPECIFIED
    SYSTEM = _pb.ROLE_SYSTEM
    USER = _pb.ROLE_USER
    ASSISTANT = _pb.ROLE_ASSISTANT
    TOOL = _pb.ROLE_TOOL


class ViewState(enum.IntEnum):
    UNSPECIFIED = _pb.VIEW_STATE_UNSPECIFIED
    FULL = _pb.VIEW_STATE_FULL
    CLEARED = _pb.VIEW_STATE_CLEARED
    EVICTED = _pb.VIEW_STATE_EVICTED
    SUMMARIZED = _pb.VIEW_STATE_SUMMARIZED


class LedgerEntryKind(enum.IntEnum):
    UNSPECIFIED = _pb.LEDGER_ENTRY_KIND_UNSPECIFIED
    FILE = _pb.LEDGER_ENTRY_KIND_FILE
    COMMAND = _pb.LEDGER_ENTRY_KIND_COMMAND
    ERROR = _pb.LEDGER_ENTRY_KIND_ERROR
    TODO = _pb.LEDGER_ENTRY_KIND_TODO
    NOTE = _pb.LEDGER_ENTRY_KIND_NOTE


class JobState(enum.IntEnum):
    UNSPECIFIED = _pb.JOB_STATE_UNSPECIFIED
    AVAILABLE = _pb.JOB_STATE_AVAILABLE
    RUNNING = _pb.JOB_STATE_RUNNING
    COMPLETED = _pb.JOB_STATE_COMPLETED
    RETRYABLE = _pb.JOB_STATE_RETRYABLE
    DISCARDED = _pb.JOB_STATE_DISCARDED
    CANCELLED = _pb.JOB_STATE_CANCELLED


@dataclasses.dataclass(frozen=True)
class Usage:
    """Tokens a provider reported, summed over the session's calls."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int


@dataclasses.dataclass(frozen=True)
class EstimatorStats:
    """How ctxd's estimates tracked the provider's counts."""

    samples: int
    mean_abs_error_pct: float
    max_abs_error_pct: float
    last_error_pct: float
    anchor_input_tokens: int


@dataclasses.dataclass(frozen=True)
class CompactionStats:
    """What compaction has done to the session so far."""

    cleared_messages: int
    evicted_messages: int
    builds: int
    extending_builds: int
    cache_stable_pct: float
    summaries_written: int
    summary_tokens: int
    consecutive_failures: int
    paused: bool
    compaction_held: bool
    resume_at_log_tokens: int


class EventKind(enum.IntEnum):
    UNSPECIFIED = _pb.EVENT_KIND_UNSPECIFIED
    COMPACTION_STARTED = _pb.EVENT_KIND_COMPACTION_STARTED
    COMPACTION_COMPLETED = _pb.EVENT_KIND_COMPACTION_COMPLETED
    COMPACTION_FAILED = _pb.EVENT_KIND_COMPACTION_FAILED
    TOOL_RESULTS_CLEARED = _pb.EVENT_KIND_TOOL_RESULTS_CLEARED
    OUTPUT_EVICTED = _pb.EVENT_KIND_OUTPUT_EVICTED
    BUDGET_THRESHOLD_CROSSED = _pb.EVENT_KIND_BUDGET_THRESHOLD_CROSSED
    SESSION_DELETED = _pb.EVENT_KIND_SESSION_DELETED
    COMPACTION_REVERTED = _pb.EVENT_KIND_COMPACTION_REVERTED
    SESSION_FINISHED = _pb.EVENT_KIND_SESSION_FINISHED
    SESSION_FORKED = _pb.EVENT_KIND_SESSION_FORKED
    RECALL_ANSWERED = _pb.EVENT_KIND_RECALL_ANSWERED


class CompactionKind(enum.IntEnum):
    UNSPECIFIED = _pb.COMPACTION_KIND_UNSPECIFIED
    SUMMARIZE = _pb.COMPACTION_KIND_SUMMARIZE
    FALLBACK = _pb.COMPACTION_KIND_FALLBACK
    EMERGENCY = _pb.COMPACTION_KIND_EMERGENCY


@dataclasses.dataclass(frozen=True)
class Summary:
    """A summary: its span of raw messages, its text, and what its check found lost."""

    summary_id: int
    depth: int
    first_seq: int
    last_seq: int
    content: str
    token_count: int
    source_tokens: int
    facts: int
    facts_lost: int
    paths: int
    paths_lost: int
    commands: int
    commands_lost: int
    raw: _pb.Summary = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class RevertedCompaction:
    """One compaction a revert undid, by its event."""

    event_cursor: str
    kind: EventKind
    compaction: CompactionKind
    seqs: tuple[int, ...]
    summary_ids: tuple[int, ...]
    first_seq: int
    last_seq: int


@dataclasses.dataclass(frozen=True)
class RevertResult:
    """What RevertCompaction did (or, with dry_run, would do)."""

    reverted: tuple[RevertedCompaction, ...]
    restored_seqs: tuple[int, ...]
    view_first_seq: int
    summaries: tuple[Summary, ...]
    tokens_before: int
    tokens_after: int
    version: int
    applied: bool
    resume_at_log_tokens: int
    raw: _pb.RevertCompactionResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class SessionInfo:
    """A session's counters, settings and lineage. `policy` is the effective policy
    (the message type CreateSession takes), `requested_policy` what the client asked."""

    session_id: str
    policy: Optional[_pb.Policy]
    requested_policy: Optional[_pb.Policy]
    estimator: Optional[EstimatorStats]
    usage_total: Optional[Usage]
    compaction: Optional[CompactionStats]
    version: int
    message_count: int
    turn_count: int
    log_tokens: int
    view_tokens: int
    metadata: dict[str, str]
    created_at: Optional[datetime.datetime]
    updated_at: Optional[datetime.datetime]
    parent_session_id: str
    parent_tool_call_id: str
    depth: int
    finished_at: Optional[datetime.datetime]
    forked_from_session_id: str
    forked_at_seq: int
    raw: _pb.Session = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class ExpandResult:
    """Original messages, byte-exact, in seq order; `next_seq` is where a capped answer
    stopped (0 when everything asked for came back)."""

    messages: tuple[_pb.Message, ...]
    total_tokens: int
    next_seq: int
    raw: _pb.ExpandResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Job:
    """A background job (a summarization) and where it stands."""

    job_id: int
    session_id: str
    kind: str
    state: JobState
    attempts: int
    max_attempts: int
    run_at: Optional[datetime.datetime]
    last_error: str
    result_json: str
    created_at: Optional[datetime.datetime]
    finished_at: Optional[datetime.datetime]
    raw: _pb.Job = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class CompactResult:
    """What Compact did (or, with dry_run, would do); `job` when it started one."""

    tokens_before: int
    tokens_after: int
    cleared_seqs: tuple[int, ...]
    summarized_first_seq: int
    summarized_last_seq: int
    version: int
    applied: bool
    no_progress: bool
    job_id: int
    job: Optional[Job]
    raw: _pb.CompactResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class BudgetBreakdown:
    """Where the next request's tokens go."""

    system_tokens: int
    summary_tokens: int
    history_tokens: int
    tool_tokens: int
    output_reserve_tokens: int
    total_tokens: int
    context_window_tokens: int
    headroom_tokens: int
    estimate_source: EstimateSource
    tokenizer_total_tokens: int


@dataclasses.dataclass(frozen=True)
class BudgetReport:
    """How the next request stands against the window."""

    breakdown: Optional[BudgetBreakdown]
    status: BudgetStatus
    recommended_action: RecommendedAction
    window_fraction: float
    raw: _pb.BudgetReport = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class AppendResult:
    """What an append did: the session's new version, the seqs it wrote (in order), the
    budget after it, whether it was answered from an earlier attempt with the same key,
    which of its results were evicted at once, and a summarization job it started."""

    version: int
    seqs: tuple[int, ...]
    budget: Optional[BudgetReport]
    replayed: bool
    evicted_seqs: tuple[int, ...]
    summarization_job_id: int
    raw: _pb.AppendTurnResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class SearchHit:
    """One match: a message (seq), a summary (summary_id, its span first_seq..last_seq)
    or a ledger entry (ledger_kind, ledger_key), with a snippet of the match."""

    session_id: str
    seq: int
    summary_id: int
    depth: int
    role: Role
    view_state: ViewState
    first_seq: int
    last_seq: int
    snippet: str
    rank: float
    created_at: Optional[datetime.datetime]
    ledger_kind: LedgerEntryKind
    ledger_key: str
    source_tokens: int
    raw: _pb.SearchHit = dataclasses.field(repr=False, compare=False)


T = TypeVar("T")


def from_pb(cls: type[T], message: PbMessage) -> T:
    """The dataclass `cls` with each of its fields read from the message's field of the
    same name (`raw` is the message itself)."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.name == "raw":
            values["raw"] = message
        else:
            values[field.name] = _value(hints[field.name], message, field.name)
    return cls(**values)


def _value(hint: Any, message: PbMessage, name: str) -> Any:
    raw = getattr(message, name)
    origin = typing.get_origin(hint)
    if origin is tuple:
        (item, _) = typing.get_args(hint)
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return tuple(from_pb(item, value) for value in raw)
        return tuple(raw)
    if origin is dict:
        return dict(raw)
    if origin is typing.Union:  # Optional[X]: a message field that may be unset
        inner = next(arg for arg in typing.get_args(hint) if arg is not type(None))
        if not message.HasField(name):
            return None
        if inner is datetime.datetime:
            return _time(raw)
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            return from_pb(inner, raw)
        return raw  # a protocol message kept as it is (the policy)
    if isinstance(hint, type) and issubclass(hint, enum.IntEnum):
        return hint(raw) if raw in hint._value2member_map_ else raw
    return raw


def _time(stamp: Timestamp) -> datetime.datetime:
    return stamp.ToDatetime(tzinfo=datetime.timezone.utc)


@dataclasses.dataclass(frozen=True)
class SessionsPage:
    """One page of ListSessions; `next_page_token` is empty on the last."""

    sessions: tuple[SessionInfo, ...]
    next_page_token: str
    raw: _pb.ListSessionsResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class ImportResult:
    """The session an import made, and how many of each record it wrote."""

    session: Optional[SessionInfo]
    messages: int
    summaries: int
    ledger_entries: int
    raw: _pb.ImportSessionResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class FinishResult:
    """A finished subagent session: its version, its parent, and the parent's append
    of its answer (when it was appended)."""

    version: int
    parent_session_id: str
    parent_tool_call_id: str
    parent_append: Optional[AppendResult]
    raw: _pb.FinishSessionResponse = dataclasses.field(repr=False, compare=False)


class TodoStatus(enum.IntEnum):
    UNSPECIFIED = _pb.TODO_STATUS_UNSPECIFIED
    PENDING = _pb.TODO_STATUS_PENDING
    IN_PROGRESS = _pb.TODO_STATUS_IN_PROGRESS
    DONE = _pb.TODO_STATUS_DONE


@dataclasses.dataclass(frozen=True)
class LedgerEntry:
    """One entry of the task ledger: a file, command, error, todo or note, with the seqs
    it came from (and a command's exit codes)."""

    kind: LedgerEntryKind
    key: str
    text: str
    seqs: tuple[int, ...]
    status: TodoStatus
    exit_codes: tuple[int, ...]
    exit_seqs: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class LedgerUpdate:
    """What UpdateLedger did: the session's version, todos kept done, the ledger now."""

    version: int
    kept_done_todo_ids: tuple[str, ...]
    entries: tuple[LedgerEntry, ...]
    raw: _pb.UpdateLedgerResponse = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class ChildSession:
    """A subagent session of this one."""

    session_id: str
    parent_tool_call_id: str
    finished: bool
    finished_at: Optional[datetime.datetime]
    created_at: Optional[datetime.datetime]


@dataclasses.dataclass(frozen=True)
class SubtreeTotals:
    """A session and all its descendants, summed."""

    sessions: int
    log_tokens: int
    usage_total: Optional[Usage]


@dataclasses.dataclass(frozen=True)
class SessionState:
    """GetSession's whole answer: the session, its summaries (and those reverts took
    out), its budget, its ledger, and its place in a tree of subagent sessions."""

    session: Optional[SessionInfo]
    summaries: tuple[Summary, ...]
    reverted_summaries: tuple[Summary, ...]
    budget: Optional[BudgetReport]
    ledger: tuple[LedgerEntry, ...]
    children: tuple[ChildSession, ...]
    children_total: int
    subtree: Optional[SubtreeTotals]
    raw: _pb.GetSessionResponse = dataclasses.field(repr=False, compare=False)
