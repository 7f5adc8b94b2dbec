"""ctxd's Python client: keep an agent's conversation in ctxd, build each request
within the model's window, append what the provider answered.

    import ctxd
    with ctxd.Client("127.0.0.1:50051", api_key="...") as client:
        session = client.create_session(policy={"context_window_tokens": 128_000})
        session.append(ctxd.user("Fix the failing test."))
        body = session.build(ctxd.Format.OPENAI_CHAT)   # add "model" and send

`AsyncClient` is the same for asyncio. Errors are `CtxdError` subclasses (see
ctxd.errors); the protocol's messages are in `ctxd.pb`. The TypeScript client's names
are here too: `CtxdClient` is `Client`, `NotFoundError` is `NotFound`, and so on.
"""

from .aio import AsyncClient, AsyncSession
from .client import Client, Session
from .convert import (
    RECALL_TOOLS,
    Format,
    ToolResult,
    assistant,
    is_recall_tool,
    system,
    tool_call,
    tool_result,
    user,
)
from .errors import (
    Aborted,
    AlreadyExists,
    Conflict,
    CtxdError,
    DeadlineExceeded,
    DoesNotFit,
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    QuotaViolation,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from .events import Event
from .requests import Tls
from .results import (
    AppendResult,
    BudgetBreakdown,
    BudgetReport,
    BudgetStatus,
    ChildSession,
    CompactResult,
    CompactionKind,
    CompactionStats,
    EstimateSource,
    EstimatorStats,
    EventKind,
    ExpandResult,
    FinishResult,
    ImportResult,
    Job,
    JobState,
    LedgerEntry,
    LedgerEntryKind,
    LedgerUpdate,
    RecommendedAction,
    RevertResult,
    RevertedCompaction,
    Role,
    SearchHit,
    SessionInfo,
    SessionState,
    SessionsPage,
    SubtreeTotals,
    Summary,
    TodoStatus,
    Usage,
    ViewState,
)
from .retry import NO_RETRY, RetryPolicy
from .v1 import ctxd_pb2 as pb

# The TypeScript client's names (and the providers' SDKs' convention of an `Error`
# suffix), for code and readers that move between the two: the same classes.
CtxdClient = Client
AsyncCtxdClient = AsyncClient
AbortedError = Aborted
AlreadyExistsError = AlreadyExists
ConflictError = Conflict
DeadlineExceededError = DeadlineExceeded
DoesNotFitError = DoesNotFit
FailedPreconditionError = FailedPrecondition
InvalidArgumentError = InvalidArgument
NotFoundError = NotFound
OutOfRangeError = OutOfRange
PermissionDeniedError = PermissionDenied
ResourceExhaustedError = ResourceExhausted
UnauthenticatedError = Unauthenticated
UnavailableError = Unavailable

__all__ = [
    "ChildSession",
    "LedgerEntry",
    "LedgerUpdate",
    "SessionState",
    "SubtreeTotals",
    "TodoStatus",
    "RECALL_TOOLS",
    "is_recall_tool",
    "Event",
    "CompactionKind",
    "EventKind",
    "FinishResult",
    "ImportResult",
    "RevertResult",
    "RevertedCompaction",
    "SessionsPage",
    "Summary",
    "Usage",
    "EstimatorStats",
    "CompactionStats",
    "AppendResult",
    "BudgetBreakdown",
    "BudgetReport",
    "BudgetStatus",
    "CompactResult",
    "EstimateSource",
    "ExpandResult",
    "Job",
    "JobState",
    "LedgerEntryKind",
    "RecommendedAction",
    "Role",
    "SearchHit",
    "SessionInfo",
    "ViewState",
    "Aborted",
    "AbortedError",
    "AlreadyExistsError",
    "AsyncCtxdClient",
    "ConflictError",
    "CtxdClient",
    "DeadlineExceededError",
    "DoesNotFitError",
    "FailedPreconditionError",
    "InvalidArgumentError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "AlreadyExists",
    "AsyncClient",
    "AsyncSession",
    "Client",
    "Conflict",
    "CtxdError",
    "DeadlineExceeded",
    "DoesNotFit",
    "FailedPrecondition",
    "FieldViolation",
    "Format",
    "InvalidArgument",
    "NO_RETRY",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "QuotaViolation",
    "ResourceExhausted",
    "RetryPolicy",
    "Session",
    "Tls",
    "ToolResult",
    "Unauthenticated",
    "Unavailable",
    "assistant",
    "pb",
    "system",
    "tool_call",
    "tool_result",
    "user",
]
