"""The synchronous client and its Session helper."""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Callable, Literal, Optional, TypeVar, Union, overload

import grpc
from google.protobuf.message import Message as ProtoMessage

from . import convert, requests
from .results import (
    AppendResult,
    BudgetReport,
    CompactResult,
    ExpandResult,
    FinishResult,
    ImportResult,
    Job,
    LedgerUpdate,
    RevertResult,
    SearchHit,
    SessionInfo,
    SessionsPage,
    SessionState,
    from_pb,
)
from .convert import Format, MessageLike, ToolsLike
from .errors import AlreadyExists, CtxdError, from_rpc_error
from .events import Event
from .requests import TlsLike
from .retry import CHANNEL_OPTIONS, EVENTS_RETRY, RetryPolicy, idempotency_key, stream_reset
from .v1 import ctxd_pb2 as pb

R = TypeVar("R", bound=ProtoMessage)
T = TypeVar("T")
JsonFormat = Literal[Format.OPENAI_CHAT, Format.ANTHROPIC_MESSAGES, Format.OPENAI_RESPONSES, Format.GEMINI]


class Client:
    """A connection to ctxd.

    `target` is host:port; `api_key` is sent as `authorization: Bearer <key>`; `tls` is
    False (plaintext), True (the system's CAs), a `ctxd.Tls` or grpc channel credentials;
    unset, it is off for a loopback target and on otherwise, as in the TypeScript client.
    `target` and `api_key` default to the CTXD_ADDRESS and CTXD_API_KEY
    environment variables. Calls that fail with UNAVAILABLE are retried under `retry`; `timeout_s`
    bounds each attempt. Use as a context manager or call close().
    """

    def __init__(
        self,
        target: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        tls: TlsLike = None,
        retry: RetryPolicy = RetryPolicy(),
        timeout_s: float = 30.0,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        target = requests.address(target)
        creds = requests.credentials(tls, target)
        all_options = list(CHANNEL_OPTIONS) + list(options)
        self._channel: Any = (
            grpc.secure_channel(target, creds, options=all_options)
            if creds is not None
            else grpc.insecure_channel(target, options=all_options)
        )
        self._metadata = requests.metadata(requests.api_key_or_env(api_key))
        self.retry = retry
        self.timeout_s = timeout_s
        self._methods: dict[str, Any] = {}

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transport ------------------------------------------------------------------

    def _method(self, name: str, response_type: type[ProtoMessage], stream: bool = False) -> Any:
        method = self._methods.get(name)
        if method is None:
            factory = self._channel.unary_stream if stream else self._channel.unary_unary
            method = factory(
                requests.SERVICE + name,
                request_serializer=lambda message: message.SerializeToString(),
                response_deserializer=response_type.FromString,
            )
            self._methods[name] = method
        return method

    def _call(
        self,
        name: str,
        request: ProtoMessage,
        response_type: type[R],
        *,
        retry: bool = True,
        timeout_s: Optional[float] = None,
        on_retry_error: Optional[Callable[[CtxdError], Optional[R]]] = None,
    ) -> R:
        """One logical call: the same request on every attempt, retried on UNAVAILABLE."""
        method = self._method(name, response_type)

        def attempt() -> R:
            response: R = method(request, timeout=timeout_s or self.timeout_s, metadata=requests.with_trace(self._metadata))
            return response

        return self._retrying(attempt, retry=retry, on_retry_error=on_retry_error)

    def _retrying(
        self,
        attempt: Callable[[], T],
        *,
        retry: bool = True,
        on_retry_error: Optional[Callable[[CtxdError], Optional[T]]] = None,
    ) -> T:
        """`attempt` until it answers, retried under `self.retry` (UNAVAILABLE, and a rate
        quota's RetryInfo); `on_retry_error` may answer for a retry that failed."""
        delays = self.retry.delays() if retry else iter(())
        retried = False
        while True:
            try:
                return attempt()
            except grpc.RpcError as rpc_error:
                error = from_rpc_error(rpc_error)
            if retried and on_retry_error is not None:
                answer = on_retry_error(error)
                if answer is not None:
                    return answer
            delay = next(delays, None)
            wait = None if delay is None else self.retry.wait(error, delay)
            if wait is None:
                raise error
            retried = True
            time.sleep(wait)

    # --- sessions -------------------------------------------------------------------

    def session(
        self, session_id: str, *, system_prompt: str = "", tools: ToolsLike = None
    ) -> Session:
        """The helper for an existing session (no call is made). `system_prompt` and
        `tools` are what build() and check() send unless told otherwise."""
        return Session(self, session_id, system_prompt=system_prompt, tools=tools)

    def create_session(
        self,
        session_id: str = "",
        *,
        policy: Union[pb.Policy, Mapping[str, Any], None] = None,
        metadata: Optional[Mapping[str, str]] = None,
        system_prompt: str = "",
        tools: ToolsLike = None,
        parent_session_id: str = "",
        parent_tool_call_id: str = "",
    ) -> Session:
        """Creates a session (with a generated id when none is given) and returns its
        helper; `session.info` is the created Session. A retry that finds the id taken
        (the first attempt did create it) reads the session instead. With
        `parent_session_id` and `parent_tool_call_id` the session is a subagent's: the
        child of that session, spawned by that (unanswered) tool call of it."""
        chosen = session_id or f"s-{uuid.uuid4().hex}"
        request = requests.create_session(chosen, policy, metadata, parent_session_id, parent_tool_call_id)

        def created_before(error: CtxdError) -> Optional[pb.CreateSessionResponse]:
            if isinstance(error, AlreadyExists):
                return pb.CreateSessionResponse(session=(self.get_session(chosen)).raw)
            return None

        response = self._call(
            "CreateSession", request, pb.CreateSessionResponse, on_retry_error=created_before
        )
        session = Session(self, response.session.session_id, system_prompt=system_prompt, tools=tools)
        session.info = from_pb(SessionInfo, response.session)
        return session

    def fork_session(
        self,
        source_session_id: str,
        session_id: str = "",
        *,
        at_seq: Optional[int] = None,
        policy: Union[pb.Policy, Mapping[str, Any], None] = None,
        metadata: Optional[Mapping[str, str]] = None,
        system_prompt: str = "",
        tools: ToolsLike = None,
    ) -> Session:
        """Forks a session: a new one (with a generated id when none is given) whose log
        is the source's up to `at_seq` (None: its last seq), shared rather than copied,
        and which then goes its own way. `policy` overrides the source's policy (not the
        server's defaults); `metadata` entries are set over the source's. Returns the
        fork's helper; `session.info` is the fork. A retry that finds the id taken by a
        fork of the same source (the first attempt did fork it) reads it instead."""
        chosen = session_id or f"s-{uuid.uuid4().hex}"
        request = requests.fork_session(source_session_id, chosen, at_seq, policy, metadata)

        def forked_before(error: CtxdError) -> Optional[pb.ForkSessionResponse]:
            if isinstance(error, AlreadyExists):
                existing = self.get_session(chosen)
                if existing.forked_from_session_id == source_session_id:
                    return pb.ForkSessionResponse(session=existing.raw)
            return None

        response = self._call("ForkSession", request, pb.ForkSessionResponse, on_retry_error=forked_before)
        session = Session(self, response.session.session_id, system_prompt=system_prompt, tools=tools)
        session.info = from_pb(SessionInfo, response.session)
        return session

    def get_session(self, session_id: str) -> SessionInfo:
        response = self._call("GetSession", pb.GetSessionRequest(session_id=session_id), pb.GetSessionResponse)
        return from_pb(SessionInfo, response.session)

    def inspect_session(self, session_id: str) -> SessionState:
        """GetSession with the view: active summaries and the next request's budget."""
        request = pb.GetSessionRequest(session_id=session_id, include_view=True)
        return from_pb(SessionState, self._call("GetSession", request, pb.GetSessionResponse))

    def list_sessions(
        self,
        *,
        page_size: int = 0,
        page_token: str = "",
        metadata: Optional[Mapping[str, str]] = None,
        parent_session_id: str = "",
        forked_from_session_id: str = "",
        finished: Optional[bool] = None,
        created_after: Optional[datetime.datetime] = None,
        created_before: Optional[datetime.datetime] = None,
        updated_after: Optional[datetime.datetime] = None,
        updated_before: Optional[datetime.datetime] = None,
    ) -> SessionsPage:
        """One page of the tenant's sessions, most recently active first (ListSessions),
        filtered by metadata, parent, fork source, finished, and created or updated
        times; pass its `next_page_token` as `page_token`, with the same filters, for
        the next page."""
        request = requests.list_sessions(
            page_size, page_token, metadata, parent_session_id, forked_from_session_id, finished,
            created_after, created_before, updated_after, updated_before,
        )
        return from_pb(SessionsPage, self._call("ListSessions", request, pb.ListSessionsResponse))

    def sessions(
        self,
        *,
        page_size: int = 0,
        metadata: Optional[Mapping[str, str]] = None,
        parent_session_id: str = "",
        forked_from_session_id: str = "",
        finished: Optional[bool] = None,
        created_after: Optional[datetime.datetime] = None,
        created_before: Optional[datetime.datetime] = None,
        updated_after: Optional[datetime.datetime] = None,
        updated_before: Optional[datetime.datetime] = None,
    ) -> Iterator[SessionInfo]:
        """Every session of a listing (see list_sessions), page after page."""
        request = requests.list_sessions(
            page_size, "", metadata, parent_session_id, forked_from_session_id, finished,
            created_after, created_before, updated_after, updated_before,
        )
        while True:
            page = self._call("ListSessions", request, pb.ListSessionsResponse)
            for session in page.sessions:
                yield from_pb(SessionInfo, session)
            if not page.next_page_token:
                return
            request.page_token = page.next_page_token

    def delete_session(self, session_id: str) -> int:
        """Deletes the session and its log; returns how many messages went with it. Not
        retried: a retry after a lost answer would say NOT_FOUND."""
        request = pb.DeleteSessionRequest(session_id=session_id)
        return self._call("DeleteSession", request, pb.DeleteSessionResponse, retry=False).deleted_messages

    def finish_session(
        self, session_id: str, final_answer: str = "", *, append_to_parent: Optional[bool] = None
    ) -> FinishResult:
        """Ends a session (it takes no more appends); with `append_to_parent` (by default:
        when there is a `final_answer`) the answer becomes the result of the parent's tool
        call that spawned it, in the same transaction (`parent_append` says where). Not
        retried: a retry after a lost answer would find the session finished
        (FailedPrecondition); get_session's `finished_at` says whether it was."""
        request = requests.finish_session(session_id, final_answer, append_to_parent)
        response = self._call("FinishSession", request, pb.FinishSessionResponse, retry=False)
        return from_pb(FinishResult, response)

    def update_ledger(
        self,
        session_id: str,
        todos: Sequence[requests.LedgerTodoLike] = (),
        notes: Sequence[requests.LedgerNoteLike] = (),
    ) -> LedgerUpdate:
        """Sets the client's part of the task ledger: todos (a done one stays done; the
        response's `kept_done_todo_ids` names those a request asked to reopen) and notes
        (empty text removes one). All or nothing; retried (setting twice is the same)."""
        request = requests.update_ledger(session_id, todos, notes)
        return from_pb(LedgerUpdate, self._call("UpdateLedger", request, pb.UpdateLedgerResponse))

    def tree(self, session_id: str) -> SessionState:
        """A session's place in its tree: `session` (parent_session_id, depth,
        finished_at), `children` (id, tool call, finished), `children_total` and `subtree`
        (sessions, log tokens and reported usage of it and its descendants)."""
        request = pb.GetSessionRequest(session_id=session_id)
        return from_pb(SessionState, self._call("GetSession", request, pb.GetSessionResponse))

    def export_session(self, session_id: str) -> bytes:
        """The session as a file (ExportSession: JSON lines, versioned, with a SHA-256;
        docs/api.md "Export and import"), to import on this server or another. Retried on
        UNAVAILABLE."""
        method = self._method("ExportSession", pb.ExportSessionChunk, stream=True)
        request = pb.ExportSessionRequest(session_id=session_id)

        def attempt() -> bytes:
            call = method(request, timeout=self.timeout_s, metadata=requests.with_trace(self._metadata))
            return b"".join(chunk.data for chunk in call)

        return self._retrying(attempt)

    def import_session(self, file: bytes, session_id: str = "") -> ImportResult:
        """Creates a session from an exported file, as `session_id` (default: the file's
        id); it expands and builds as the original. A damaged or changed file raises
        InvalidArgument naming the record, and nothing is written. Not retried: a retry
        after a lost answer would find the id taken (AlreadyExists)."""
        method = requests.import_method(self._channel)
        try:
            response: pb.ImportSessionResponse = method(
                iter(requests.import_chunks(file, session_id)),
                timeout=self.timeout_s,
                metadata=requests.with_trace(self._metadata),
            )
            return from_pb(ImportResult, response)
        except grpc.RpcError as rpc_error:
            raise from_rpc_error(rpc_error) from None

    def get_job(self, job_id: int) -> Job:
        return from_pb(Job, self._call("GetJob", pb.GetJobRequest(job_id=job_id), pb.Job))

    # --- raw appends (the Session helpers call these) --------------------------------

    def append_turn(self, request: pb.AppendTurnRequest) -> pb.AppendTurnResponse:
        """AppendTurn; a request without an idempotency key gets one for all its attempts."""
        if not request.idempotency_key:
            request.idempotency_key = idempotency_key()
        return self._call("AppendTurn", request, pb.AppendTurnResponse)

    def answer_recall(self, session_id: str, tool_call_id: str) -> AppendResult:
        """AnswerRecall: ctxd runs the model's call to one of its recall tools and appends
        the answer as the call's tool result (retry-safe: a repeat returns the first)."""
        request = pb.AnswerRecallRequest(session_id=session_id, tool_call_id=tool_call_id)
        return from_pb(AppendResult, self._call("AnswerRecall", request, pb.AppendTurnResponse))

    def append_native(self, request: pb.AppendNativeRequest) -> pb.AppendTurnResponse:
        """AppendNative; a request without an idempotency key gets one for all its attempts."""
        if not request.idempotency_key:
            request.idempotency_key = idempotency_key()
        return self._call("AppendNative", request, pb.AppendTurnResponse)

    def build_messages(self, request: pb.BuildMessagesRequest) -> pb.BuildMessagesResponse:
        return self._call("BuildMessages", request, pb.BuildMessagesResponse)

    def check_budget(self, request: pb.CheckBudgetRequest) -> pb.BudgetReport:
        return self._call("CheckBudget", request, pb.CheckBudgetResponse).budget

    def expand(self, request: pb.ExpandRequest) -> pb.ExpandResponse:
        return self._call("Expand", request, pb.ExpandResponse)

    def compact(self, request: pb.CompactRequest) -> pb.CompactResponse:
        timeout = self.timeout_s + (request.wait_timeout_ms or 60_000) / 1000 if request.wait else None
        return self._call("Compact", request, pb.CompactResponse, timeout_s=timeout)

    def revert_compaction(self, request: pb.RevertCompactionRequest) -> pb.RevertCompactionResponse:
        return self._call("RevertCompaction", request, pb.RevertCompactionResponse)

    def search(
        self,
        query: str,
        *,
        session_id: str = "",
        roles: Sequence[int] = (),
        scope: int = pb.SEARCH_SCOPE_BOTH,
        limit: int = 0,
        tree_root_session_id: str = "",
        since: Optional[datetime.datetime] = None,
        until: Optional[datetime.datetime] = None,
    ) -> list[SearchHit]:
        """Full-text search over one session (session_id), one tree (tree_root_session_id:
        that session and its descendants) or all of the tenant's; only what was written
        at or after `since` and before `until` when given."""
        request = requests.search(session_id, query, roles, scope, limit, tree_root_session_id, since, until)
        response = self._call("Search", request, pb.SearchResponse)
        return [from_pb(SearchHit, hit) for hit in response.hits]

    def events(
        self,
        session_id: str = "",
        *,
        kinds: Sequence[int] = (),
        after: str = "",
        from_now: bool = False,
        heartbeat_interval_ms: int = 0,
        retry: RetryPolicy = EVENTS_RETRY,
        tree_root_session_id: str = "",
    ) -> Iterator[Event]:
        """The events of one session, one tree (tree_root_session_id: that session and its
        descendants, with a tenant stream's cursors) or the tenant's, in order, resuming
        after the last one received whenever the stream breaks (UNAVAILABLE: a server
        restart, a dropped connection; a reset stream). The subscription opens at the first item asked for.
        Ends after a session's SESSION_DELETED; otherwise runs until the caller stops
        iterating, or the server stays away past `retry`. A session stream resumed after
        its session was deleted raises NotFound (the server keeps no session to follow)."""
        cursor = after
        method = self._method("SubscribeEvents", pb.SubscribeEventsResponse, stream=True)
        delays = retry.delays()
        while True:
            request = requests.subscribe(
                session_id, kinds, cursor, from_now, heartbeat_interval_ms, tree_root_session_id
            )
            call = method(request, metadata=requests.with_trace(self._metadata))
            try:
                for item in call:
                    delays = retry.delays()
                    if item.HasField("heartbeat"):
                        cursor = item.heartbeat.cursor or cursor
                        continue
                    cursor = item.event.cursor
                    yield from_pb(Event, item.event)
                    if session_id and item.event.kind == pb.EVENT_KIND_SESSION_DELETED:
                        return
                # Ended without an error (a proxy closing it, say): resume like after one.
                delay = next(delays, None)
                if delay is None:
                    raise CtxdError(grpc.StatusCode.UNAVAILABLE, "the events stream kept ending")
                time.sleep(delay)
            except grpc.RpcError as rpc_error:
                error = from_rpc_error(rpc_error)
                if not (retry.retries(error.code) or stream_reset(error.code, error.message)):
                    raise error from None
                delay = next(delays, None)
                if delay is None:
                    raise error from None
                time.sleep(delay)
            finally:
                call.cancel()


class Session:
    """One session's helpers. `system_prompt` and `tools` are sent by build() and check()
    unless given there; `last_build` is the latest BuildMessages response (budget,
    trimmed, summaries, version)."""

    def __init__(self, client: Client, session_id: str, *, system_prompt: str = "", tools: ToolsLike = None):
        self.client = client
        self.id = session_id
        self.system_prompt = system_prompt
        self.tools = tools
        self.info: Optional[SessionInfo] = None
        self.last_build: Optional[pb.BuildMessagesResponse] = None

    def get(self) -> SessionInfo:
        return self.client.get_session(self.id)

    def spawn(
        self,
        tool_call_id: str,
        session_id: str = "",
        *,
        policy: Union[pb.Policy, Mapping[str, Any], None] = None,
        metadata: Optional[Mapping[str, str]] = None,
        system_prompt: str = "",
        tools: ToolsLike = None,
    ) -> Session:
        """Creates a subagent's session for `tool_call_id`, an unanswered tool call of this
        session, with a policy of its own (a smaller window, say); finish() it with its
        answer to append that as the call's result here."""
        return self.client.create_session(
            session_id,
            policy=policy,
            metadata=metadata,
            system_prompt=system_prompt,
            tools=tools,
            parent_session_id=self.id,
            parent_tool_call_id=tool_call_id,
        )

    def finish(
        self, final_answer: str = "", *, append_to_parent: Optional[bool] = None
    ) -> FinishResult:
        """Ends this session; a `final_answer` becomes the parent's tool result (see
        Client.finish_session)."""
        return self.client.finish_session(self.id, final_answer, append_to_parent=append_to_parent)

    def update_ledger(
        self, todos: Sequence[requests.LedgerTodoLike] = (), notes: Sequence[requests.LedgerNoteLike] = ()
    ) -> LedgerUpdate:
        """Sets this session's todos and notes (see Client.update_ledger)."""
        return self.client.update_ledger(self.id, todos, notes)

    def tree(self) -> SessionState:
        """This session's parent, children and subtree totals (see Client.tree)."""
        return self.client.tree(self.id)

    def fork(
        self,
        session_id: str = "",
        *,
        at_seq: Optional[int] = None,
        policy: Union[pb.Policy, Mapping[str, Any], None] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Session:
        """A fork of this session at `at_seq` (None: its last seq), with this helper's
        system prompt and tools; see Client.fork_session."""
        return self.client.fork_session(
            self.id,
            session_id,
            at_seq=at_seq,
            policy=policy,
            metadata=metadata,
            system_prompt=self.system_prompt,
            tools=self.tools,
        )

    def delete(self) -> int:
        return self.client.delete_session(self.id)

    @overload
    def build(
        self,
        format: Literal[Format.NEUTRAL],
        *,
        system_prompt: Optional[str] = None,
        tools: ToolsLike = None,
        max_output_tokens: Optional[int] = None,
    ) -> list[pb.Message]: ...

    @overload
    def build(
        self,
        format: JsonFormat,
        *,
        system_prompt: Optional[str] = None,
        tools: ToolsLike = None,
        max_output_tokens: Optional[int] = None,
    ) -> dict[str, Any]: ...

    def build(
        self,
        format: Format,
        *,
        system_prompt: Optional[str] = None,
        tools: ToolsLike = None,
        max_output_tokens: Optional[int] = None,
    ) -> Union[dict[str, Any], list[pb.Message]]:
        """The request to send now: the provider-ready body as a dict (add "model" and
        send) for the JSON formats, the messages for NEUTRAL (with `last_build.system_prompt`)."""
        request = requests.build(
            self.id,
            format,
            self.system_prompt if system_prompt is None else system_prompt,
            self.tools if tools is None else tools,
            max_output_tokens,
        )
        self.last_build = self.client.build_messages(request)
        return requests.built_body(self.last_build, format)

    def append(
        self,
        *messages: MessageLike,
        usage: Union[pb.Usage, Mapping[str, int], None] = None,
        expected_version: Optional[int] = None,
        idempotency_key: str = "",
    ) -> AppendResult:
        """Appends messages (proto Messages or OpenAI Chat-shaped dicts) atomically."""
        request = requests.append_turn(self.id, messages, usage, expected_version, idempotency_key)
        return from_pb(AppendResult, self.client.append_turn(request))

    def append_response(
        self,
        response: Any,
        format: Format,
        *,
        items: Any = None,
        expected_version: Optional[int] = None,
        idempotency_key: str = "",
    ) -> AppendResult:
        """Appends a model's reply as the provider returned it (its SDK's response object,
        a dict or the JSON text), with its usage; `items` (as append_tool_results) are
        appended after it in the same call."""
        items_json = "" if items is None else convert.items_text(items, format)
        request = requests.append_native(
            self.id, format, convert.response_text(response), items_json, expected_version, idempotency_key
        )
        return from_pb(AppendResult, self.client.append_native(request))

    def append_tool_results(
        self,
        results: Any,
        format: Format,
        *,
        expected_version: Optional[int] = None,
        idempotency_key: str = "",
    ) -> AppendResult:
        """Appends request items in the provider's shape: tool results and user messages
        (dicts or the SDK's param types), `ctxd.ToolResult`s, or a JSON array text."""
        request = requests.append_native(
            self.id, format, "", convert.items_text(results, format), expected_version, idempotency_key
        )
        return from_pb(AppendResult, self.client.append_native(request))

    def answer_recall(self, tool_call_id: str) -> AppendResult:
        """Answers the model's call to ctxd_recall_search or ctxd_recall_expand (offered
        when the session's policy has recall_tools): ctxd runs it and appends the result,
        so the next build carries it. Call it for each call `is_recall_tool` names."""
        return self.client.answer_recall(self.id, tool_call_id)

    def check(
        self,
        *pending: MessageLike,
        system_prompt: Optional[str] = None,
        tools: ToolsLike = None,
        max_output_tokens: Optional[int] = None,
    ) -> BudgetReport:
        """The budget of the next request, with `pending` messages counted as appended."""
        request = requests.check(
            self.id,
            self.system_prompt if system_prompt is None else system_prompt,
            self.tools if tools is None else tools,
            max_output_tokens,
            pending,
        )
        return from_pb(BudgetReport, self.client.check_budget(request))

    def compact(
        self,
        mode: int = pb.COMPACT_MODE_AUTO,
        *,
        target_tokens: int = 0,
        dry_run: bool = False,
        wait: bool = False,
        wait_timeout_ms: int = 0,
    ) -> CompactResult:
        request = requests.compact(self.id, mode, target_tokens, dry_run, wait, wait_timeout_ms)
        return from_pb(CompactResult, self.client.compact(request))

    def revert_compaction(
        self,
        event_cursor: Optional[str] = None,
        *,
        summary_id: Optional[int] = None,
        dry_run: bool = False,
        expected_version: Optional[int] = None,
    ) -> RevertResult:
        """Undoes a compaction, named by its event's cursor (a TOOL_RESULTS_CLEARED or
        COMPACTION_COMPLETED event) or a summary it wrote, and every later one: the view
        as it was before it. With dry_run, what would be restored; nothing changes."""
        request = requests.revert_compaction(self.id, event_cursor, summary_id, dry_run, expected_version)
        return from_pb(RevertResult, self.client.revert_compaction(request))

    def expand(
        self,
        seqs: Optional[Sequence[int]] = None,
        *,
        first_seq: Optional[int] = None,
        last_seq: Optional[int] = None,
        summary_id: Optional[int] = None,
        max_tokens: int = 0,
    ) -> ExpandResult:
        """Original messages, byte-exact: by seqs, a seq range, or a summary's span."""
        request = requests.expand(self.id, seqs, first_seq, last_seq, summary_id, max_tokens)
        return from_pb(ExpandResult, self.client.expand(request))

    def search(
        self,
        query: str,
        *,
        roles: Sequence[int] = (),
        scope: int = pb.SEARCH_SCOPE_BOTH,
        limit: int = 0,
        since: Optional[datetime.datetime] = None,
        until: Optional[datetime.datetime] = None,
    ) -> list[SearchHit]:
        return self.client.search(
            query, session_id=self.id, roles=roles, scope=scope, limit=limit, since=since, until=until
        )

    def events(
        self,
        *,
        kinds: Sequence[int] = (),
        after: str = "",
        from_now: bool = False,
        heartbeat_interval_ms: int = 0,
        retry: RetryPolicy = EVENTS_RETRY,
    ) -> Iterator[Event]:
        return self.client.events(
            self.id,
            kinds=kinds,
            after=after,
            from_now=from_now,
            heartbeat_interval_ms=heartbeat_interval_ms,
            retry=retry,
        )
