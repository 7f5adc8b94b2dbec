"""Typed events: what `events()` yields, as frozen dataclasses — the event's envelope
(id, cursor, session, kind, time, the session's version) and its detail, the one field
of the eleven that is set (the others None), each with the protocol's field names."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Optional

from .results import BudgetStatus, CompactionKind, EventKind
from .v1 import ctxd_pb2 as _pb


@dataclasses.dataclass(frozen=True)
class CompactionStarted:
    compaction: CompactionKind
    job_id: int
    attempt: int


@dataclasses.dataclass(frozen=True)
class CompactionCompleted:
    compaction: CompactionKind
    level: int
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    first_seq: int
    last_seq: int
    summary_id: int
    summaries_written: int
    duration_ms: int
    job_id: int


@dataclasses.dataclass(frozen=True)
class CompactionFailed:
    compaction: CompactionKind
    error: str
    job_id: int
    attempt: int
    will_retry: bool


@dataclasses.dataclass(frozen=True)
class ToolResultsCleared:
    seqs: tuple[int, ...]
    tokens_before: int
    tokens_after: int


@dataclasses.dataclass(frozen=True)
class OutputEvicted:
    seq: int
    tool_name: str
    tokens: int
    preview_tokens: int


@dataclasses.dataclass(frozen=True)
class BudgetThresholdCrossed:
    previous_status: BudgetStatus
    status: BudgetStatus
    used_tokens: int
    context_window: int


@dataclasses.dataclass(frozen=True)
class SessionDeleted:
    """The session was deleted (the last event of its stream)."""


@dataclasses.dataclass(frozen=True)
class CompactionReverted:
    event_seqs: tuple[int, ...]
    summary_ids: tuple[int, ...]
    restored_seqs: tuple[int, ...]
    view_first_seq: int
    tokens_before: int
    tokens_after: int
    resume_at_log_tokens: int


@dataclasses.dataclass(frozen=True)
class SessionFinished:
    child_session_id: str
    parent_session_id: str
    parent_tool_call_id: str
    result_seq: int


@dataclasses.dataclass(frozen=True)
class SessionForked:
    source_session_id: str
    fork_session_id: str
    at_seq: int


@dataclasses.dataclass(frozen=True)
class RecallAnswered:
    seq: int
    tool_call_id: str
    tool: str
    tokens: int
    error: bool
    round: int


@dataclasses.dataclass(frozen=True)
class Event:
    """One event of a session's (or the tenant's) stream; resume after `cursor`."""

    event_id: int
    cursor: str
    session_id: str
    session_seq: int
    kind: EventKind
    created_at: Optional[datetime.datetime]
    session_version: int
    compaction_started: Optional[CompactionStarted]
    compaction_completed: Optional[CompactionCompleted]
    compaction_failed: Optional[CompactionFailed]
    tool_results_cleared: Optional[ToolResultsCleared]
    output_evicted: Optional[OutputEvicted]
    budget_threshold_crossed: Optional[BudgetThresholdCrossed]
    session_deleted: Optional[SessionDeleted]
    compaction_reverted: Optional[CompactionReverted]
    session_finished: Optional[SessionFinished]
    session_forked: Optional[SessionForked]
    recall_answered: Optional[RecallAnswered]
    raw: _pb.Event = dataclasses.field(repr=False, compare=False)
