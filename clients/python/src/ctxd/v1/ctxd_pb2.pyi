from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_SYSTEM: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_ASSISTANT: _ClassVar[Role]
    ROLE_TOOL: _ClassVar[Role]

class ViewState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VIEW_STATE_UNSPECIFIED: _ClassVar[ViewState]
    VIEW_STATE_FULL: _ClassVar[ViewState]
    VIEW_STATE_CLEARED: _ClassVar[ViewState]
    VIEW_STATE_EVICTED: _ClassVar[ViewState]
    VIEW_STATE_SUMMARIZED: _ClassVar[ViewState]

class Tokenizer(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOKENIZER_UNSPECIFIED: _ClassVar[Tokenizer]
    TOKENIZER_O200K_BASE: _ClassVar[Tokenizer]
    TOKENIZER_CL100K_BASE: _ClassVar[Tokenizer]
    TOKENIZER_HEURISTIC: _ClassVar[Tokenizer]
    TOKENIZER_DEEPSEEK_V3: _ClassVar[Tokenizer]

class SummaryPlacement(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUMMARY_PLACEMENT_UNSPECIFIED: _ClassVar[SummaryPlacement]
    SUMMARY_PLACEMENT_SYSTEM: _ClassVar[SummaryPlacement]
    SUMMARY_PLACEMENT_USER: _ClassVar[SummaryPlacement]
    SUMMARY_PLACEMENT_AFTER_TASK: _ClassVar[SummaryPlacement]

class LedgerEntryKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LEDGER_ENTRY_KIND_UNSPECIFIED: _ClassVar[LedgerEntryKind]
    LEDGER_ENTRY_KIND_FILE: _ClassVar[LedgerEntryKind]
    LEDGER_ENTRY_KIND_COMMAND: _ClassVar[LedgerEntryKind]
    LEDGER_ENTRY_KIND_ERROR: _ClassVar[LedgerEntryKind]
    LEDGER_ENTRY_KIND_TODO: _ClassVar[LedgerEntryKind]
    LEDGER_ENTRY_KIND_NOTE: _ClassVar[LedgerEntryKind]

class TodoStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TODO_STATUS_UNSPECIFIED: _ClassVar[TodoStatus]
    TODO_STATUS_PENDING: _ClassVar[TodoStatus]
    TODO_STATUS_IN_PROGRESS: _ClassVar[TodoStatus]
    TODO_STATUS_DONE: _ClassVar[TodoStatus]

class EstimateSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ESTIMATE_SOURCE_UNSPECIFIED: _ClassVar[EstimateSource]
    ESTIMATE_SOURCE_ANCHORED: _ClassVar[EstimateSource]
    ESTIMATE_SOURCE_TOKENIZER: _ClassVar[EstimateSource]
    ESTIMATE_SOURCE_CALIBRATED: _ClassVar[EstimateSource]

class BudgetStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BUDGET_STATUS_UNSPECIFIED: _ClassVar[BudgetStatus]
    BUDGET_STATUS_OK: _ClassVar[BudgetStatus]
    BUDGET_STATUS_WARN: _ClassVar[BudgetStatus]
    BUDGET_STATUS_OVER: _ClassVar[BudgetStatus]

class RecommendedAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECOMMENDED_ACTION_UNSPECIFIED: _ClassVar[RecommendedAction]
    RECOMMENDED_ACTION_NONE: _ClassVar[RecommendedAction]
    RECOMMENDED_ACTION_CLEAR_TOOL_RESULTS: _ClassVar[RecommendedAction]
    RECOMMENDED_ACTION_SUMMARIZE: _ClassVar[RecommendedAction]
    RECOMMENDED_ACTION_TRIM_OLDEST_TURNS: _ClassVar[RecommendedAction]
    RECOMMENDED_ACTION_REDUCE_REQUEST: _ClassVar[RecommendedAction]

class OutputFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTPUT_FORMAT_UNSPECIFIED: _ClassVar[OutputFormat]
    OUTPUT_FORMAT_NEUTRAL: _ClassVar[OutputFormat]
    OUTPUT_FORMAT_OPENAI_CHAT: _ClassVar[OutputFormat]
    OUTPUT_FORMAT_ANTHROPIC_MESSAGES: _ClassVar[OutputFormat]
    OUTPUT_FORMAT_OPENAI_RESPONSES: _ClassVar[OutputFormat]
    OUTPUT_FORMAT_GEMINI: _ClassVar[OutputFormat]

class CompactMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPACT_MODE_UNSPECIFIED: _ClassVar[CompactMode]
    COMPACT_MODE_AUTO: _ClassVar[CompactMode]
    COMPACT_MODE_CLEAR_TOOL_RESULTS: _ClassVar[CompactMode]
    COMPACT_MODE_SUMMARIZE: _ClassVar[CompactMode]
    COMPACT_MODE_EMERGENCY: _ClassVar[CompactMode]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    JOB_STATE_AVAILABLE: _ClassVar[JobState]
    JOB_STATE_RUNNING: _ClassVar[JobState]
    JOB_STATE_COMPLETED: _ClassVar[JobState]
    JOB_STATE_RETRYABLE: _ClassVar[JobState]
    JOB_STATE_DISCARDED: _ClassVar[JobState]
    JOB_STATE_CANCELLED: _ClassVar[JobState]

class SearchScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_SCOPE_UNSPECIFIED: _ClassVar[SearchScope]
    SEARCH_SCOPE_MESSAGES: _ClassVar[SearchScope]
    SEARCH_SCOPE_SUMMARIES: _ClassVar[SearchScope]
    SEARCH_SCOPE_BOTH: _ClassVar[SearchScope]
    SEARCH_SCOPE_LEDGER: _ClassVar[SearchScope]
    SEARCH_SCOPE_ALL: _ClassVar[SearchScope]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_COMPACTION_STARTED: _ClassVar[EventKind]
    EVENT_KIND_COMPACTION_COMPLETED: _ClassVar[EventKind]
    EVENT_KIND_COMPACTION_FAILED: _ClassVar[EventKind]
    EVENT_KIND_TOOL_RESULTS_CLEARED: _ClassVar[EventKind]
    EVENT_KIND_OUTPUT_EVICTED: _ClassVar[EventKind]
    EVENT_KIND_BUDGET_THRESHOLD_CROSSED: _ClassVar[EventKind]
    EVENT_KIND_SESSION_DELETED: _ClassVar[EventKind]
    EVENT_KIND_COMPACTION_REVERTED: _ClassVar[EventKind]
    EVENT_KIND_SESSION_FINISHED: _ClassVar[EventKind]
    EVENT_KIND_SESSION_FORKED: _ClassVar[EventKind]
    EVENT_KIND_RECALL_ANSWERED: _ClassVar[EventKind]

class CompactionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPACTION_KIND_UNSPECIFIED: _ClassVar[CompactionKind]
    COMPACTION_KIND_SUMMARIZE: _ClassVar[CompactionKind]
    COMPACTION_KIND_FALLBACK: _ClassVar[CompactionKind]
    COMPACTION_KIND_EMERGENCY: _ClassVar[CompactionKind]
ROLE_UNSPECIFIED: Role
ROLE_SYSTEM: Role
ROLE_USER: Role
ROLE_ASSISTANT: Role
ROLE_TOOL: Role
VIEW_STATE_UNSPECIFIED: ViewState
VIEW_STATE_FULL: ViewState
VIEW_STATE_CLEARED: ViewState
VIEW_STATE_EVICTED: ViewState
VIEW_STATE_SUMMARIZED: ViewState
TOKENIZER_UNSPECIFIED: Tokenizer
TOKENIZER_O200K_BASE: Tokenizer
TOKENIZER_CL100K_BASE: Tokenizer
TOKENIZER_HEURISTIC: Tokenizer
TOKENIZER_DEEPSEEK_V3: Tokenizer
SUMMARY_PLACEMENT_UNSPECIFIED: SummaryPlacement
SUMMARY_PLACEMENT_SYSTEM: SummaryPlacement
SUMMARY_PLACEMENT_USER: SummaryPlacement
SUMMARY_PLACEMENT_AFTER_TASK: SummaryPlacement
LEDGER_ENTRY_KIND_UNSPECIFIED: LedgerEntryKind
LEDGER_ENTRY_KIND_FILE: LedgerEntryKind
LEDGER_ENTRY_KIND_COMMAND: LedgerEntryKind
LEDGER_ENTRY_KIND_ERROR: LedgerEntryKind
LEDGER_ENTRY_KIND_TODO: LedgerEntryKind
LEDGER_ENTRY_KIND_NOTE: LedgerEntryKind
TODO_STATUS_UNSPECIFIED: TodoStatus
TODO_STATUS_PENDING: TodoStatus
TODO_STATUS_IN_PROGRESS: TodoStatus
TODO_STATUS_DONE: TodoStatus
ESTIMATE_SOURCE_UNSPECIFIED: EstimateSource
ESTIMATE_SOURCE_ANCHORED: EstimateSource
ESTIMATE_SOURCE_TOKENIZER: EstimateSource
ESTIMATE_SOURCE_CALIBRATED: EstimateSource
BUDGET_STATUS_UNSPECIFIED: BudgetStatus
BUDGET_STATUS_OK: BudgetStatus
BUDGET_STATUS_WARN: BudgetStatus
BUDGET_STATUS_OVER: BudgetStatus
RECOMMENDED_ACTION_UNSPECIFIED: RecommendedAction
RECOMMENDED_ACTION_NONE: RecommendedAction
RECOMMENDED_ACTION_CLEAR_TOOL_RESULTS: RecommendedAction
RECOMMENDED_ACTION_SUMMARIZE: RecommendedAction
RECOMMENDED_ACTION_TRIM_OLDEST_TURNS: RecommendedAction
RECOMMENDED_ACTION_REDUCE_REQUEST: RecommendedAction
OUTPUT_FORMAT_UNSPECIFIED: OutputFormat
OUTPUT_FORMAT_NEUTRAL: OutputFormat
OUTPUT_FORMAT_OPENAI_CHAT: OutputFormat
OUTPUT_FORMAT_ANTHROPIC_MESSAGES: OutputFormat
OUTPUT_FORMAT_OPENAI_RESPONSES: OutputFormat
OUTPUT_FORMAT_GEMINI: OutputFormat
COMPACT_MODE_UNSPECIFIED: CompactMode
COMPACT_MODE_AUTO: CompactMode
COMPACT_MODE_CLEAR_TOOL_RESULTS: CompactMode
COMPACT_MODE_SUMMARIZE: CompactMode
COMPACT_MODE_EMERGENCY: CompactMode
JOB_STATE_UNSPECIFIED: JobState
JOB_STATE_AVAILABLE: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_COMPLETED: JobState
JOB_STATE_RETRYABLE: JobState
JOB_STATE_DISCARDED: JobState
JOB_STATE_CANCELLED: JobState
SEARCH_SCOPE_UNSPECIFIED: SearchScope
SEARCH_SCOPE_MESSAGES: SearchScope
SEARCH_SCOPE_SUMMARIES: SearchScope
SEARCH_SCOPE_BOTH: SearchScope
SEARCH_SCOPE_LEDGER: SearchScope
SEARCH_SCOPE_ALL: SearchScope
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_COMPACTION_STARTED: EventKind
EVENT_KIND_COMPACTION_COMPLETED: EventKind
EVENT_KIND_COMPACTION_FAILED: EventKind
EVENT_KIND_TOOL_RESULTS_CLEARED: EventKind
EVENT_KIND_OUTPUT_EVICTED: EventKind
EVENT_KIND_BUDGET_THRESHOLD_CROSSED: EventKind
EVENT_KIND_SESSION_DELETED: EventKind
EVENT_KIND_COMPACTION_REVERTED: EventKind
EVENT_KIND_SESSION_FINISHED: EventKind
EVENT_KIND_SESSION_FORKED: EventKind
EVENT_KIND_RECALL_ANSWERED: EventKind
COMPACTION_KIND_UNSPECIFIED: CompactionKind
COMPACTION_KIND_SUMMARIZE: CompactionKind
COMPACTION_KIND_FALLBACK: CompactionKind
COMPACTION_KIND_EMERGENCY: CompactionKind

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments_json: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments_json: _Optional[str] = ...) -> None: ...

class MediaRef(_message.Message):
    __slots__ = ("uri", "mime_type", "token_estimate")
    URI_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    uri: str
    mime_type: str
    token_estimate: int
    def __init__(self, uri: _Optional[str] = ..., mime_type: _Optional[str] = ..., token_estimate: _Optional[int] = ...) -> None: ...

class ContentPart(_message.Message):
    __slots__ = ("text", "media")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    text: str
    media: MediaRef
    def __init__(self, text: _Optional[str] = ..., media: _Optional[_Union[MediaRef, _Mapping]] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("role", "content", "parts", "reasoning", "tool_calls", "tool_call_id", "name", "metadata", "pinned", "seq", "turn", "token_count", "view_state", "created_at", "view_token_count")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    VIEW_STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    VIEW_TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    role: Role
    content: str
    parts: _containers.RepeatedCompositeFieldContainer[ContentPart]
    reasoning: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_call_id: str
    name: str
    metadata: _containers.ScalarMap[str, str]
    pinned: bool
    seq: int
    turn: int
    token_count: int
    view_state: ViewState
    created_at: _timestamp_pb2.Timestamp
    view_token_count: int
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., content: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ..., reasoning: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., name: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., pinned: bool = ..., seq: _Optional[int] = ..., turn: _Optional[int] = ..., token_count: _Optional[int] = ..., view_state: _Optional[_Union[ViewState, str]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., view_token_count: _Optional[int] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ("name", "description", "parameters_json_schema")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    parameters_json_schema: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_json_schema: _Optional[str] = ...) -> None: ...

class Tools(_message.Message):
    __slots__ = ("definitions", "token_count")
    DEFINITIONS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    definitions: ToolDefinitionList
    token_count: int
    def __init__(self, definitions: _Optional[_Union[ToolDefinitionList, _Mapping]] = ..., token_count: _Optional[int] = ...) -> None: ...

class ToolDefinitionList(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    def __init__(self, items: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cached_input_tokens")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cached_input_tokens: _Optional[int] = ...) -> None: ...

class Policy(_message.Message):
    __slots__ = ("context_window_tokens", "max_output_tokens", "tokenizer", "heuristic_chars_per_token", "clear_threshold", "summarize_threshold", "hard_limit", "fresh_tail_messages", "fresh_tail_tokens", "tool_output_protect_tokens", "clear_min_savings_tokens", "eviction_threshold_tokens", "leaf_chunk_messages", "leaf_chunk_tokens", "leaf_target_tokens", "condense_fanin", "condensed_target_tokens", "summary_placement", "summarizer_profile", "media_item_tokens", "clear_target", "compaction_failure_limit", "ledger_fraction", "recall_tools", "retention_seconds")
    CONTEXT_WINDOW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOKENIZER_FIELD_NUMBER: _ClassVar[int]
    HEURISTIC_CHARS_PER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLEAR_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    HARD_LIMIT_FIELD_NUMBER: _ClassVar[int]
    FRESH_TAIL_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    FRESH_TAIL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOOL_OUTPUT_PROTECT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_MIN_SAVINGS_TOKENS_FIELD_NUMBER: _ClassVar[int]
    EVICTION_THRESHOLD_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LEAF_CHUNK_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    LEAF_CHUNK_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LEAF_TARGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CONDENSE_FANIN_FIELD_NUMBER: _ClassVar[int]
    CONDENSED_TARGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZER_PROFILE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_ITEM_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_TARGET_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FAILURE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    LEDGER_FRACTION_FIELD_NUMBER: _ClassVar[int]
    RECALL_TOOLS_FIELD_NUMBER: _ClassVar[int]
    RETENTION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    context_window_tokens: int
    max_output_tokens: int
    tokenizer: Tokenizer
    heuristic_chars_per_token: float
    clear_threshold: float
    summarize_threshold: float
    hard_limit: float
    fresh_tail_messages: int
    fresh_tail_tokens: int
    tool_output_protect_tokens: int
    clear_min_savings_tokens: int
    eviction_threshold_tokens: int
    leaf_chunk_messages: int
    leaf_chunk_tokens: int
    leaf_target_tokens: int
    condense_fanin: int
    condensed_target_tokens: int
    summary_placement: SummaryPlacement
    summarizer_profile: str
    media_item_tokens: int
    clear_target: float
    compaction_failure_limit: int
    ledger_fraction: float
    recall_tools: bool
    retention_seconds: int
    def __init__(self, context_window_tokens: _Optional[int] = ..., max_output_tokens: _Optional[int] = ..., tokenizer: _Optional[_Union[Tokenizer, str]] = ..., heuristic_chars_per_token: _Optional[float] = ..., clear_threshold: _Optional[float] = ..., summarize_threshold: _Optional[float] = ..., hard_limit: _Optional[float] = ..., fresh_tail_messages: _Optional[int] = ..., fresh_tail_tokens: _Optional[int] = ..., tool_output_protect_tokens: _Optional[int] = ..., clear_min_savings_tokens: _Optional[int] = ..., eviction_threshold_tokens: _Optional[int] = ..., leaf_chunk_messages: _Optional[int] = ..., leaf_chunk_tokens: _Optional[int] = ..., leaf_target_tokens: _Optional[int] = ..., condense_fanin: _Optional[int] = ..., condensed_target_tokens: _Optional[int] = ..., summary_placement: _Optional[_Union[SummaryPlacement, str]] = ..., summarizer_profile: _Optional[str] = ..., media_item_tokens: _Optional[int] = ..., clear_target: _Optional[float] = ..., compaction_failure_limit: _Optional[int] = ..., ledger_fraction: _Optional[float] = ..., recall_tools: bool = ..., retention_seconds: _Optional[int] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("session_id", "policy", "metadata", "parent_session_id", "parent_tool_call_id")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    policy: Policy
    metadata: _containers.ScalarMap[str, str]
    parent_session_id: str
    parent_tool_call_id: str
    def __init__(self, session_id: _Optional[str] = ..., policy: _Optional[_Union[Policy, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., parent_session_id: _Optional[str] = ..., parent_tool_call_id: _Optional[str] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "metadata", "parent_session_id", "forked_from_session_id", "finished", "created_after", "created_before", "updated_after", "updated_before")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FORKED_FROM_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    metadata: _containers.ScalarMap[str, str]
    parent_session_id: str
    forked_from_session_id: str
    finished: bool
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    updated_after: _timestamp_pb2.Timestamp
    updated_before: _timestamp_pb2.Timestamp
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., parent_session_id: _Optional[str] = ..., forked_from_session_id: _Optional[str] = ..., finished: bool = ..., created_after: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_after: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    next_page_token: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id", "include_view")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_VIEW_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    include_view: bool
    def __init__(self, session_id: _Optional[str] = ..., include_view: bool = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("summaries", "reverted_summaries", "budget", "session", "ledger", "children", "children_total", "subtree")
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    REVERTED_SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    LEDGER_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_TOTAL_FIELD_NUMBER: _ClassVar[int]
    SUBTREE_FIELD_NUMBER: _ClassVar[int]
    summaries: _containers.RepeatedCompositeFieldContainer[Summary]
    reverted_summaries: _containers.RepeatedCompositeFieldContainer[Summary]
    budget: BudgetReport
    session: Session
    ledger: _containers.RepeatedCompositeFieldContainer[LedgerEntry]
    children: _containers.RepeatedCompositeFieldContainer[ChildSession]
    children_total: int
    subtree: SubtreeTotals
    def __init__(self, summaries: _Optional[_Iterable[_Union[Summary, _Mapping]]] = ..., reverted_summaries: _Optional[_Iterable[_Union[Summary, _Mapping]]] = ..., budget: _Optional[_Union[BudgetReport, _Mapping]] = ..., session: _Optional[_Union[Session, _Mapping]] = ..., ledger: _Optional[_Iterable[_Union[LedgerEntry, _Mapping]]] = ..., children: _Optional[_Iterable[_Union[ChildSession, _Mapping]]] = ..., children_total: _Optional[int] = ..., subtree: _Optional[_Union[SubtreeTotals, _Mapping]] = ...) -> None: ...

class LedgerEntry(_message.Message):
    __slots__ = ("kind", "key", "text", "seqs", "status", "exit_codes", "exit_seqs")
    KIND_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SEQS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODES_FIELD_NUMBER: _ClassVar[int]
    EXIT_SEQS_FIELD_NUMBER: _ClassVar[int]
    kind: LedgerEntryKind
    key: str
    text: str
    seqs: _containers.RepeatedScalarFieldContainer[int]
    status: TodoStatus
    exit_codes: _containers.RepeatedScalarFieldContainer[int]
    exit_seqs: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, kind: _Optional[_Union[LedgerEntryKind, str]] = ..., key: _Optional[str] = ..., text: _Optional[str] = ..., seqs: _Optional[_Iterable[int]] = ..., status: _Optional[_Union[TodoStatus, str]] = ..., exit_codes: _Optional[_Iterable[int]] = ..., exit_seqs: _Optional[_Iterable[int]] = ...) -> None: ...

class LedgerTodo(_message.Message):
    __slots__ = ("id", "text", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    status: TodoStatus
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., status: _Optional[_Union[TodoStatus, str]] = ...) -> None: ...

class LedgerNote(_message.Message):
    __slots__ = ("id", "text")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class UpdateLedgerRequest(_message.Message):
    __slots__ = ("session_id", "todos", "notes")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TODOS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    todos: _containers.RepeatedCompositeFieldContainer[LedgerTodo]
    notes: _containers.RepeatedCompositeFieldContainer[LedgerNote]
    def __init__(self, session_id: _Optional[str] = ..., todos: _Optional[_Iterable[_Union[LedgerTodo, _Mapping]]] = ..., notes: _Optional[_Iterable[_Union[LedgerNote, _Mapping]]] = ...) -> None: ...

class UpdateLedgerResponse(_message.Message):
    __slots__ = ("version", "kept_done_todo_ids", "entries")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KEPT_DONE_TODO_IDS_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    version: int
    kept_done_todo_ids: _containers.RepeatedScalarFieldContainer[str]
    entries: _containers.RepeatedCompositeFieldContainer[LedgerEntry]
    def __init__(self, version: _Optional[int] = ..., kept_done_todo_ids: _Optional[_Iterable[str]] = ..., entries: _Optional[_Iterable[_Union[LedgerEntry, _Mapping]]] = ...) -> None: ...

class ChildSession(_message.Message):
    __slots__ = ("session_id", "parent_tool_call_id", "finished", "finished_at", "created_at")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    parent_tool_call_id: str
    finished: bool
    finished_at: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, session_id: _Optional[str] = ..., parent_tool_call_id: _Optional[str] = ..., finished: bool = ..., finished_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SubtreeTotals(_message.Message):
    __slots__ = ("sessions", "log_tokens", "usage_total")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    LOG_TOKENS_FIELD_NUMBER: _ClassVar[int]
    USAGE_TOTAL_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    log_tokens: int
    usage_total: Usage
    def __init__(self, sessions: _Optional[int] = ..., log_tokens: _Optional[int] = ..., usage_total: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class FinishSessionRequest(_message.Message):
    __slots__ = ("session_id", "final_answer", "append_to_parent")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FINAL_ANSWER_FIELD_NUMBER: _ClassVar[int]
    APPEND_TO_PARENT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    final_answer: str
    append_to_parent: bool
    def __init__(self, session_id: _Optional[str] = ..., final_answer: _Optional[str] = ..., append_to_parent: bool = ...) -> None: ...

class FinishSessionResponse(_message.Message):
    __slots__ = ("version", "parent_session_id", "parent_tool_call_id", "parent_append")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_APPEND_FIELD_NUMBER: _ClassVar[int]
    version: int
    parent_session_id: str
    parent_tool_call_id: str
    parent_append: AppendTurnResponse
    def __init__(self, version: _Optional[int] = ..., parent_session_id: _Optional[str] = ..., parent_tool_call_id: _Optional[str] = ..., parent_append: _Optional[_Union[AppendTurnResponse, _Mapping]] = ...) -> None: ...

class ForkSessionRequest(_message.Message):
    __slots__ = ("source_session_id", "at_seq", "session_id", "policy", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SOURCE_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AT_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    source_session_id: str
    at_seq: int
    session_id: str
    policy: Policy
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, source_session_id: _Optional[str] = ..., at_seq: _Optional[int] = ..., session_id: _Optional[str] = ..., policy: _Optional[_Union[Policy, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ForkSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ("deleted_messages",)
    DELETED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    deleted_messages: int
    def __init__(self, deleted_messages: _Optional[int] = ...) -> None: ...

class EstimatorStats(_message.Message):
    __slots__ = ("samples", "mean_abs_error_pct", "max_abs_error_pct", "last_error_pct", "anchor_input_tokens")
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    MEAN_ABS_ERROR_PCT_FIELD_NUMBER: _ClassVar[int]
    MAX_ABS_ERROR_PCT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_PCT_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    samples: int
    mean_abs_error_pct: float
    max_abs_error_pct: float
    last_error_pct: float
    anchor_input_tokens: int
    def __init__(self, samples: _Optional[int] = ..., mean_abs_error_pct: _Optional[float] = ..., max_abs_error_pct: _Optional[float] = ..., last_error_pct: _Optional[float] = ..., anchor_input_tokens: _Optional[int] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("session_id", "policy", "version", "message_count", "turn_count", "log_tokens", "view_tokens", "metadata", "created_at", "updated_at", "estimator", "usage_total", "compaction", "requested_policy", "parent_session_id", "parent_tool_call_id", "depth", "finished_at", "forked_from_session_id", "forked_at_seq")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    TURN_COUNT_FIELD_NUMBER: _ClassVar[int]
    LOG_TOKENS_FIELD_NUMBER: _ClassVar[int]
    VIEW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ESTIMATOR_FIELD_NUMBER: _ClassVar[int]
    USAGE_TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_POLICY_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    FORKED_FROM_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FORKED_AT_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    policy: Policy
    version: int
    message_count: int
    turn_count: int
    log_tokens: int
    view_tokens: int
    metadata: _containers.ScalarMap[str, str]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    estimator: EstimatorStats
    usage_total: Usage
    compaction: CompactionStats
    requested_policy: Policy
    parent_session_id: str
    parent_tool_call_id: str
    depth: int
    finished_at: _timestamp_pb2.Timestamp
    forked_from_session_id: str
    forked_at_seq: int
    def __init__(self, session_id: _Optional[str] = ..., policy: _Optional[_Union[Policy, _Mapping]] = ..., version: _Optional[int] = ..., message_count: _Optional[int] = ..., turn_count: _Optional[int] = ..., log_tokens: _Optional[int] = ..., view_tokens: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., estimator: _Optional[_Union[EstimatorStats, _Mapping]] = ..., usage_total: _Optional[_Union[Usage, _Mapping]] = ..., compaction: _Optional[_Union[CompactionStats, _Mapping]] = ..., requested_policy: _Optional[_Union[Policy, _Mapping]] = ..., parent_session_id: _Optional[str] = ..., parent_tool_call_id: _Optional[str] = ..., depth: _Optional[int] = ..., finished_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., forked_from_session_id: _Optional[str] = ..., forked_at_seq: _Optional[int] = ...) -> None: ...

class CompactionStats(_message.Message):
    __slots__ = ("cleared_messages", "evicted_messages", "builds", "extending_builds", "cache_stable_pct", "summaries_written", "summary_tokens", "consecutive_failures", "paused", "compaction_held", "resume_at_log_tokens")
    CLEARED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EVICTED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    BUILDS_FIELD_NUMBER: _ClassVar[int]
    EXTENDING_BUILDS_FIELD_NUMBER: _ClassVar[int]
    CACHE_STABLE_PCT_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_HELD_FIELD_NUMBER: _ClassVar[int]
    RESUME_AT_LOG_TOKENS_FIELD_NUMBER: _ClassVar[int]
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
    def __init__(self, cleared_messages: _Optional[int] = ..., evicted_messages: _Optional[int] = ..., builds: _Optional[int] = ..., extending_builds: _Optional[int] = ..., cache_stable_pct: _Optional[float] = ..., summaries_written: _Optional[int] = ..., summary_tokens: _Optional[int] = ..., consecutive_failures: _Optional[int] = ..., paused: bool = ..., compaction_held: bool = ..., resume_at_log_tokens: _Optional[int] = ...) -> None: ...

class BudgetBreakdown(_message.Message):
    __slots__ = ("system_tokens", "summary_tokens", "history_tokens", "tool_tokens", "output_reserve_tokens", "total_tokens", "context_window_tokens", "headroom_tokens", "estimate_source", "tokenizer_total_tokens")
    SYSTEM_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOOL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_RESERVE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    HEADROOM_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    TOKENIZER_TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
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
    def __init__(self, system_tokens: _Optional[int] = ..., summary_tokens: _Optional[int] = ..., history_tokens: _Optional[int] = ..., tool_tokens: _Optional[int] = ..., output_reserve_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., context_window_tokens: _Optional[int] = ..., headroom_tokens: _Optional[int] = ..., estimate_source: _Optional[_Union[EstimateSource, str]] = ..., tokenizer_total_tokens: _Optional[int] = ...) -> None: ...

class BudgetReport(_message.Message):
    __slots__ = ("breakdown", "status", "recommended_action", "window_fraction")
    BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RECOMMENDED_ACTION_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FRACTION_FIELD_NUMBER: _ClassVar[int]
    breakdown: BudgetBreakdown
    status: BudgetStatus
    recommended_action: RecommendedAction
    window_fraction: float
    def __init__(self, breakdown: _Optional[_Union[BudgetBreakdown, _Mapping]] = ..., status: _Optional[_Union[BudgetStatus, str]] = ..., recommended_action: _Optional[_Union[RecommendedAction, str]] = ..., window_fraction: _Optional[float] = ...) -> None: ...

class AppendTurnRequest(_message.Message):
    __slots__ = ("session_id", "messages", "expected_version", "idempotency_key", "usage")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    expected_version: int
    idempotency_key: str
    usage: Usage
    def __init__(self, session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., expected_version: _Optional[int] = ..., idempotency_key: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class AppendTurnResponse(_message.Message):
    __slots__ = ("version", "seqs", "budget", "replayed", "evicted_seqs", "summarization_job_id")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEQS_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    EVICTED_SEQS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZATION_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    version: int
    seqs: _containers.RepeatedScalarFieldContainer[int]
    budget: BudgetReport
    replayed: bool
    evicted_seqs: _containers.RepeatedScalarFieldContainer[int]
    summarization_job_id: int
    def __init__(self, version: _Optional[int] = ..., seqs: _Optional[_Iterable[int]] = ..., budget: _Optional[_Union[BudgetReport, _Mapping]] = ..., replayed: bool = ..., evicted_seqs: _Optional[_Iterable[int]] = ..., summarization_job_id: _Optional[int] = ...) -> None: ...

class AppendNativeRequest(_message.Message):
    __slots__ = ("session_id", "format", "response_json", "items_json", "expected_version", "idempotency_key")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_JSON_FIELD_NUMBER: _ClassVar[int]
    ITEMS_JSON_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    format: OutputFormat
    response_json: str
    items_json: str
    expected_version: int
    idempotency_key: str
    def __init__(self, session_id: _Optional[str] = ..., format: _Optional[_Union[OutputFormat, str]] = ..., response_json: _Optional[str] = ..., items_json: _Optional[str] = ..., expected_version: _Optional[int] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class BuildMessagesRequest(_message.Message):
    __slots__ = ("session_id", "system_prompt", "tools", "max_output_tokens", "format")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    system_prompt: str
    tools: Tools
    max_output_tokens: int
    format: OutputFormat
    def __init__(self, session_id: _Optional[str] = ..., system_prompt: _Optional[str] = ..., tools: _Optional[_Union[Tools, _Mapping]] = ..., max_output_tokens: _Optional[int] = ..., format: _Optional[_Union[OutputFormat, str]] = ...) -> None: ...

class Trimmed(_message.Message):
    __slots__ = ("turns", "messages", "tokens", "incomplete_step_messages", "summaries")
    TURNS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    INCOMPLETE_STEP_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    turns: int
    messages: int
    tokens: int
    incomplete_step_messages: int
    summaries: int
    def __init__(self, turns: _Optional[int] = ..., messages: _Optional[int] = ..., tokens: _Optional[int] = ..., incomplete_step_messages: _Optional[int] = ..., summaries: _Optional[int] = ...) -> None: ...

class BuildMessagesResponse(_message.Message):
    __slots__ = ("messages", "json", "budget", "version", "trimmed", "first_seq", "last_seq", "system_prompt", "summaries")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TRIMMED_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    json: str
    budget: BudgetReport
    version: int
    trimmed: Trimmed
    first_seq: int
    last_seq: int
    system_prompt: str
    summaries: _containers.RepeatedCompositeFieldContainer[Summary]
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., json: _Optional[str] = ..., budget: _Optional[_Union[BudgetReport, _Mapping]] = ..., version: _Optional[int] = ..., trimmed: _Optional[_Union[Trimmed, _Mapping]] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., system_prompt: _Optional[str] = ..., summaries: _Optional[_Iterable[_Union[Summary, _Mapping]]] = ...) -> None: ...

class CheckBudgetRequest(_message.Message):
    __slots__ = ("session_id", "system_prompt", "tools", "max_output_tokens", "pending_messages")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PENDING_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    system_prompt: str
    tools: Tools
    max_output_tokens: int
    pending_messages: _containers.RepeatedCompositeFieldContainer[Message]
    def __init__(self, session_id: _Optional[str] = ..., system_prompt: _Optional[str] = ..., tools: _Optional[_Union[Tools, _Mapping]] = ..., max_output_tokens: _Optional[int] = ..., pending_messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ...) -> None: ...

class CheckBudgetResponse(_message.Message):
    __slots__ = ("budget",)
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    budget: BudgetReport
    def __init__(self, budget: _Optional[_Union[BudgetReport, _Mapping]] = ...) -> None: ...

class SeqRange(_message.Message):
    __slots__ = ("first_seq", "last_seq")
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    first_seq: int
    last_seq: int
    def __init__(self, first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ...) -> None: ...

class SeqList(_message.Message):
    __slots__ = ("seqs",)
    SEQS_FIELD_NUMBER: _ClassVar[int]
    seqs: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seqs: _Optional[_Iterable[int]] = ...) -> None: ...

class ExpandRequest(_message.Message):
    __slots__ = ("session_id", "range", "list", "summary_id", "max_tokens")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    range: SeqRange
    list: SeqList
    summary_id: int
    max_tokens: int
    def __init__(self, session_id: _Optional[str] = ..., range: _Optional[_Union[SeqRange, _Mapping]] = ..., list: _Optional[_Union[SeqList, _Mapping]] = ..., summary_id: _Optional[int] = ..., max_tokens: _Optional[int] = ...) -> None: ...

class ExpandResponse(_message.Message):
    __slots__ = ("messages", "total_tokens", "next_seq")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    NEXT_SEQ_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    total_tokens: int
    next_seq: int
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., total_tokens: _Optional[int] = ..., next_seq: _Optional[int] = ...) -> None: ...

class Summary(_message.Message):
    __slots__ = ("summary_id", "depth", "first_seq", "last_seq", "content", "token_count", "source_tokens", "facts", "facts_lost", "paths", "paths_lost", "commands", "commands_lost", "identifiers", "identifiers_lost", "reverted")
    SUMMARY_ID_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    FACTS_LOST_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    PATHS_LOST_FIELD_NUMBER: _ClassVar[int]
    COMMANDS_FIELD_NUMBER: _ClassVar[int]
    COMMANDS_LOST_FIELD_NUMBER: _ClassVar[int]
    IDENTIFIERS_FIELD_NUMBER: _ClassVar[int]
    IDENTIFIERS_LOST_FIELD_NUMBER: _ClassVar[int]
    REVERTED_FIELD_NUMBER: _ClassVar[int]
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
    identifiers: int
    identifiers_lost: int
    reverted: bool
    def __init__(self, summary_id: _Optional[int] = ..., depth: _Optional[int] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., content: _Optional[str] = ..., token_count: _Optional[int] = ..., source_tokens: _Optional[int] = ..., facts: _Optional[int] = ..., facts_lost: _Optional[int] = ..., paths: _Optional[int] = ..., paths_lost: _Optional[int] = ..., commands: _Optional[int] = ..., commands_lost: _Optional[int] = ..., identifiers: _Optional[int] = ..., identifiers_lost: _Optional[int] = ..., reverted: bool = ...) -> None: ...

class CompactRequest(_message.Message):
    __slots__ = ("session_id", "mode", "target_tokens", "dry_run", "wait", "wait_timeout_ms")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TARGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    WAIT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    mode: CompactMode
    target_tokens: int
    dry_run: bool
    wait: bool
    wait_timeout_ms: int
    def __init__(self, session_id: _Optional[str] = ..., mode: _Optional[_Union[CompactMode, str]] = ..., target_tokens: _Optional[int] = ..., dry_run: bool = ..., wait: bool = ..., wait_timeout_ms: _Optional[int] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ("tokens_before", "tokens_after", "cleared_seqs", "summarized_first_seq", "summarized_last_seq", "version", "applied", "no_progress", "job_id", "job")
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    CLEARED_SEQS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    NO_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    tokens_before: int
    tokens_after: int
    cleared_seqs: _containers.RepeatedScalarFieldContainer[int]
    summarized_first_seq: int
    summarized_last_seq: int
    version: int
    applied: bool
    no_progress: bool
    job_id: int
    job: Job
    def __init__(self, tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ..., cleared_seqs: _Optional[_Iterable[int]] = ..., summarized_first_seq: _Optional[int] = ..., summarized_last_seq: _Optional[int] = ..., version: _Optional[int] = ..., applied: bool = ..., no_progress: bool = ..., job_id: _Optional[int] = ..., job: _Optional[_Union[Job, _Mapping]] = ...) -> None: ...

class RevertCompactionRequest(_message.Message):
    __slots__ = ("session_id", "event_cursor", "summary_id", "dry_run", "expected_version")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    event_cursor: str
    summary_id: int
    dry_run: bool
    expected_version: int
    def __init__(self, session_id: _Optional[str] = ..., event_cursor: _Optional[str] = ..., summary_id: _Optional[int] = ..., dry_run: bool = ..., expected_version: _Optional[int] = ...) -> None: ...

class RevertedCompaction(_message.Message):
    __slots__ = ("event_cursor", "kind", "compaction", "seqs", "summary_ids", "first_seq", "last_seq")
    EVENT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    SEQS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_IDS_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    event_cursor: str
    kind: EventKind
    compaction: CompactionKind
    seqs: _containers.RepeatedScalarFieldContainer[int]
    summary_ids: _containers.RepeatedScalarFieldContainer[int]
    first_seq: int
    last_seq: int
    def __init__(self, event_cursor: _Optional[str] = ..., kind: _Optional[_Union[EventKind, str]] = ..., compaction: _Optional[_Union[CompactionKind, str]] = ..., seqs: _Optional[_Iterable[int]] = ..., summary_ids: _Optional[_Iterable[int]] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ...) -> None: ...

class RevertCompactionResponse(_message.Message):
    __slots__ = ("reverted", "restored_seqs", "view_first_seq", "summaries", "tokens_before", "tokens_after", "version", "applied", "resume_at_log_tokens")
    REVERTED_FIELD_NUMBER: _ClassVar[int]
    RESTORED_SEQS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    RESUME_AT_LOG_TOKENS_FIELD_NUMBER: _ClassVar[int]
    reverted: _containers.RepeatedCompositeFieldContainer[RevertedCompaction]
    restored_seqs: _containers.RepeatedScalarFieldContainer[int]
    view_first_seq: int
    summaries: _containers.RepeatedCompositeFieldContainer[Summary]
    tokens_before: int
    tokens_after: int
    version: int
    applied: bool
    resume_at_log_tokens: int
    def __init__(self, reverted: _Optional[_Iterable[_Union[RevertedCompaction, _Mapping]]] = ..., restored_seqs: _Optional[_Iterable[int]] = ..., view_first_seq: _Optional[int] = ..., summaries: _Optional[_Iterable[_Union[Summary, _Mapping]]] = ..., tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ..., version: _Optional[int] = ..., applied: bool = ..., resume_at_log_tokens: _Optional[int] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    def __init__(self, job_id: _Optional[int] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("job_id", "session_id", "kind", "state", "attempts", "max_attempts", "run_at", "last_error", "result_json", "created_at", "finished_at")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    job_id: int
    session_id: str
    kind: str
    state: JobState
    attempts: int
    max_attempts: int
    run_at: _timestamp_pb2.Timestamp
    last_error: str
    result_json: str
    created_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    def __init__(self, job_id: _Optional[int] = ..., session_id: _Optional[str] = ..., kind: _Optional[str] = ..., state: _Optional[_Union[JobState, str]] = ..., attempts: _Optional[int] = ..., max_attempts: _Optional[int] = ..., run_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_error: _Optional[str] = ..., result_json: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("session_id", "query", "roles", "since", "until", "scope", "limit", "tree_root_session_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TREE_ROOT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    query: str
    roles: _containers.RepeatedScalarFieldContainer[Role]
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    scope: SearchScope
    limit: int
    tree_root_session_id: str
    def __init__(self, session_id: _Optional[str] = ..., query: _Optional[str] = ..., roles: _Optional[_Iterable[_Union[Role, str]]] = ..., since: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., scope: _Optional[_Union[SearchScope, str]] = ..., limit: _Optional[int] = ..., tree_root_session_id: _Optional[str] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("session_id", "seq", "summary_id", "depth", "role", "view_state", "first_seq", "last_seq", "snippet", "rank", "created_at", "ledger_kind", "ledger_key", "source_tokens")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_ID_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    VIEW_STATE_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LEDGER_KIND_FIELD_NUMBER: _ClassVar[int]
    LEDGER_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TOKENS_FIELD_NUMBER: _ClassVar[int]
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
    created_at: _timestamp_pb2.Timestamp
    ledger_kind: LedgerEntryKind
    ledger_key: str
    source_tokens: int
    def __init__(self, session_id: _Optional[str] = ..., seq: _Optional[int] = ..., summary_id: _Optional[int] = ..., depth: _Optional[int] = ..., role: _Optional[_Union[Role, str]] = ..., view_state: _Optional[_Union[ViewState, str]] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., snippet: _Optional[str] = ..., rank: _Optional[float] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., ledger_kind: _Optional[_Union[LedgerEntryKind, str]] = ..., ledger_key: _Optional[str] = ..., source_tokens: _Optional[int] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ...) -> None: ...

class CompactionStarted(_message.Message):
    __slots__ = ("compaction", "job_id", "attempt")
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    compaction: CompactionKind
    job_id: int
    attempt: int
    def __init__(self, compaction: _Optional[_Union[CompactionKind, str]] = ..., job_id: _Optional[int] = ..., attempt: _Optional[int] = ...) -> None: ...

class CompactionCompleted(_message.Message):
    __slots__ = ("compaction", "level", "tokens_before", "tokens_after", "messages_before", "messages_after", "first_seq", "last_seq", "summary_id", "summaries_written", "duration_ms", "job_id")
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_AFTER_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
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
    def __init__(self, compaction: _Optional[_Union[CompactionKind, str]] = ..., level: _Optional[int] = ..., tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ..., messages_before: _Optional[int] = ..., messages_after: _Optional[int] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., summary_id: _Optional[int] = ..., summaries_written: _Optional[int] = ..., duration_ms: _Optional[int] = ..., job_id: _Optional[int] = ...) -> None: ...

class CompactionFailed(_message.Message):
    __slots__ = ("compaction", "error", "job_id", "attempt", "will_retry")
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WILL_RETRY_FIELD_NUMBER: _ClassVar[int]
    compaction: CompactionKind
    error: str
    job_id: int
    attempt: int
    will_retry: bool
    def __init__(self, compaction: _Optional[_Union[CompactionKind, str]] = ..., error: _Optional[str] = ..., job_id: _Optional[int] = ..., attempt: _Optional[int] = ..., will_retry: bool = ...) -> None: ...

class ToolResultsCleared(_message.Message):
    __slots__ = ("seqs", "tokens_before", "tokens_after")
    SEQS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    seqs: _containers.RepeatedScalarFieldContainer[int]
    tokens_before: int
    tokens_after: int
    def __init__(self, seqs: _Optional[_Iterable[int]] = ..., tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ...) -> None: ...

class OutputEvicted(_message.Message):
    __slots__ = ("seq", "tool_name", "tokens", "preview_tokens")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    seq: int
    tool_name: str
    tokens: int
    preview_tokens: int
    def __init__(self, seq: _Optional[int] = ..., tool_name: _Optional[str] = ..., tokens: _Optional[int] = ..., preview_tokens: _Optional[int] = ...) -> None: ...

class BudgetThresholdCrossed(_message.Message):
    __slots__ = ("previous_status", "status", "used_tokens", "context_window")
    PREVIOUS_STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    USED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    previous_status: BudgetStatus
    status: BudgetStatus
    used_tokens: int
    context_window: int
    def __init__(self, previous_status: _Optional[_Union[BudgetStatus, str]] = ..., status: _Optional[_Union[BudgetStatus, str]] = ..., used_tokens: _Optional[int] = ..., context_window: _Optional[int] = ...) -> None: ...

class SessionDeleted(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CompactionReverted(_message.Message):
    __slots__ = ("event_seqs", "summary_ids", "restored_seqs", "view_first_seq", "tokens_before", "tokens_after", "resume_at_log_tokens")
    EVENT_SEQS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_IDS_FIELD_NUMBER: _ClassVar[int]
    RESTORED_SEQS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    RESUME_AT_LOG_TOKENS_FIELD_NUMBER: _ClassVar[int]
    event_seqs: _containers.RepeatedScalarFieldContainer[int]
    summary_ids: _containers.RepeatedScalarFieldContainer[int]
    restored_seqs: _containers.RepeatedScalarFieldContainer[int]
    view_first_seq: int
    tokens_before: int
    tokens_after: int
    resume_at_log_tokens: int
    def __init__(self, event_seqs: _Optional[_Iterable[int]] = ..., summary_ids: _Optional[_Iterable[int]] = ..., restored_seqs: _Optional[_Iterable[int]] = ..., view_first_seq: _Optional[int] = ..., tokens_before: _Optional[int] = ..., tokens_after: _Optional[int] = ..., resume_at_log_tokens: _Optional[int] = ...) -> None: ...

class SessionFinished(_message.Message):
    __slots__ = ("child_session_id", "parent_session_id", "parent_tool_call_id", "result_seq")
    CHILD_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_SEQ_FIELD_NUMBER: _ClassVar[int]
    child_session_id: str
    parent_session_id: str
    parent_tool_call_id: str
    result_seq: int
    def __init__(self, child_session_id: _Optional[str] = ..., parent_session_id: _Optional[str] = ..., parent_tool_call_id: _Optional[str] = ..., result_seq: _Optional[int] = ...) -> None: ...

class SessionForked(_message.Message):
    __slots__ = ("source_session_id", "fork_session_id", "at_seq")
    SOURCE_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FORK_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AT_SEQ_FIELD_NUMBER: _ClassVar[int]
    source_session_id: str
    fork_session_id: str
    at_seq: int
    def __init__(self, source_session_id: _Optional[str] = ..., fork_session_id: _Optional[str] = ..., at_seq: _Optional[int] = ...) -> None: ...

class RecallAnswered(_message.Message):
    __slots__ = ("seq", "tool_call_id", "tool", "tokens", "error", "round")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    seq: int
    tool_call_id: str
    tool: str
    tokens: int
    error: bool
    round: int
    def __init__(self, seq: _Optional[int] = ..., tool_call_id: _Optional[str] = ..., tool: _Optional[str] = ..., tokens: _Optional[int] = ..., error: bool = ..., round: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("event_id", "cursor", "session_id", "session_seq", "kind", "created_at", "session_version", "compaction_started", "compaction_completed", "compaction_failed", "tool_results_cleared", "output_evicted", "budget_threshold_crossed", "session_deleted", "compaction_reverted", "session_finished", "session_forked", "recall_answered")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_SEQ_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SESSION_VERSION_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_STARTED_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FAILED_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULTS_CLEARED_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_EVICTED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_THRESHOLD_CROSSED_FIELD_NUMBER: _ClassVar[int]
    SESSION_DELETED_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_REVERTED_FIELD_NUMBER: _ClassVar[int]
    SESSION_FINISHED_FIELD_NUMBER: _ClassVar[int]
    SESSION_FORKED_FIELD_NUMBER: _ClassVar[int]
    RECALL_ANSWERED_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    cursor: str
    session_id: str
    session_seq: int
    kind: EventKind
    created_at: _timestamp_pb2.Timestamp
    session_version: int
    compaction_started: CompactionStarted
    compaction_completed: CompactionCompleted
    compaction_failed: CompactionFailed
    tool_results_cleared: ToolResultsCleared
    output_evicted: OutputEvicted
    budget_threshold_crossed: BudgetThresholdCrossed
    session_deleted: SessionDeleted
    compaction_reverted: CompactionReverted
    session_finished: SessionFinished
    session_forked: SessionForked
    recall_answered: RecallAnswered
    def __init__(self, event_id: _Optional[int] = ..., cursor: _Optional[str] = ..., session_id: _Optional[str] = ..., session_seq: _Optional[int] = ..., kind: _Optional[_Union[EventKind, str]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., session_version: _Optional[int] = ..., compaction_started: _Optional[_Union[CompactionStarted, _Mapping]] = ..., compaction_completed: _Optional[_Union[CompactionCompleted, _Mapping]] = ..., compaction_failed: _Optional[_Union[CompactionFailed, _Mapping]] = ..., tool_results_cleared: _Optional[_Union[ToolResultsCleared, _Mapping]] = ..., output_evicted: _Optional[_Union[OutputEvicted, _Mapping]] = ..., budget_threshold_crossed: _Optional[_Union[BudgetThresholdCrossed, _Mapping]] = ..., session_deleted: _Optional[_Union[SessionDeleted, _Mapping]] = ..., compaction_reverted: _Optional[_Union[CompactionReverted, _Mapping]] = ..., session_finished: _Optional[_Union[SessionFinished, _Mapping]] = ..., session_forked: _Optional[_Union[SessionForked, _Mapping]] = ..., recall_answered: _Optional[_Union[RecallAnswered, _Mapping]] = ...) -> None: ...

class SubscribeEventsRequest(_message.Message):
    __slots__ = ("session_id", "kinds", "after", "from_now", "heartbeat_interval_ms", "tree_root_session_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    FROM_NOW_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    TREE_ROOT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    kinds: _containers.RepeatedScalarFieldContainer[EventKind]
    after: str
    from_now: bool
    heartbeat_interval_ms: int
    tree_root_session_id: str
    def __init__(self, session_id: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[EventKind, str]]] = ..., after: _Optional[str] = ..., from_now: bool = ..., heartbeat_interval_ms: _Optional[int] = ..., tree_root_session_id: _Optional[str] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("time", "cursor")
    TIME_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    cursor: str
    def __init__(self, time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., cursor: _Optional[str] = ...) -> None: ...

class SubscribeEventsResponse(_message.Message):
    __slots__ = ("event", "heartbeat")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    heartbeat: Heartbeat
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ...) -> None: ...

class ExportSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class ExportSessionChunk(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class ImportSessionRequest(_message.Message):
    __slots__ = ("session_id", "data")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    data: bytes
    def __init__(self, session_id: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class AnswerRecallRequest(_message.Message):
    __slots__ = ("session_id", "tool_call_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    tool_call_id: str
    def __init__(self, session_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ...) -> None: ...

class ImportSessionResponse(_message.Message):
    __slots__ = ("session", "messages", "summaries", "ledger_entries")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    LEDGER_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    session: Session
    messages: int
    summaries: int
    ledger_entries: int
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., messages: _Optional[int] = ..., summaries: _Optional[int] = ..., ledger_entries: _Optional[int] = ...) -> None: ...
