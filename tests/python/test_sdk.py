"""The Python SDK (clients/python, import name `ctxd`) against a real `ctxd serve`.

Run by tests/python/run after it installs the SDK into the test venv; CTXD_BIN is the
server binary, DATABASE_URL (when set) its database. Proves every Session helper, the
errors' details, that a retried append is never applied twice, and that events()
resumes across a server restart with no event lost or repeated, for the sync and the
asyncio client.
"""

import asyncio
import concurrent.futures
import dataclasses
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402

import ctxd  # noqa: E402
from ctxd import pb  # noqa: E402
from sdk_harness import CuttingProxy, Puller, Server, wait_until  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = {}
NOTES = []
# Small enough that a 600-token tool result is evicted (one OUTPUT_EVICTED event each).
EVICTING = {"context_window_tokens": 8000, "max_output_tokens": 1000, "eviction_threshold_tokens": 100}
BIG_OUTPUT = "line of tool output\n" * 150


def setUpModule():
    server = Server()
    SERVER["server"] = server
    server.start()


def tearDownModule():
    server = SERVER.get("server")
    if server is not None:
        server.close()


def server():
    return SERVER["server"]


def tool_step(session, call_id):
    """One tool step whose result is evicted: returns the result's seq."""
    session.append(ctxd.assistant(tool_calls=[ctxd.tool_call(call_id, "bash", {"command": "cat big.log"})]))
    response = session.append(ctxd.tool_result(call_id, BIG_OUTPUT))
    assert list(response.evicted_seqs) == list(response.seqs), response
    return response.seqs[0]


class Generated(unittest.TestCase):
    def test_shipped_stubs_match_the_proto(self):
        """The generated modules in the package are what grpcio-tools makes of proto/ now
        (checked in the venv of the oldest supported versions, which has the generator)."""
        from importlib.metadata import version

        sys.path.insert(0, os.path.join(REPO, "clients", "python"))
        try:
            import generate
        finally:
            sys.path.pop(0)
        if version("grpcio-tools") != generate.GENERATOR:
            self.skipTest(f"grpcio-tools {generate.GENERATOR} is in requirements-oldest.txt's venv")
        check = subprocess.run(
            [sys.executable, os.path.join(REPO, "clients", "python", "generate.py"), "--check"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(check.returncode, 0, check.stderr + check.stdout)
        # And the installed package carries them as its own modules.
        self.assertEqual(pb.__name__, "ctxd.v1.ctxd_pb2")
        from ctxd.v1 import ctxd_pb2_grpc

        self.assertTrue(hasattr(ctxd_pb2_grpc, "ContextServiceStub"))


class Modules(unittest.TestCase):
    """The package's modules import one another without a cycle (every `from . import x`
    and `from .x import …`, generated code aside)."""

    @staticmethod
    def graph():
        import re

        src = os.path.join(REPO, "clients", "python", "src", "ctxd")
        edges = {}
        for name in sorted(os.listdir(src)):
            if name.endswith(".py"):
                with open(os.path.join(src, name), encoding="utf-8") as file:
                    text = file.read()
                found = re.findall(r"^from \.(\w+) import", text, re.M)
                for group in re.findall(r"^from \. import ([\w, ]+)", text, re.M):
                    found += [part.strip() for part in group.split(",")]
                edges[name[:-3]] = [target for target in found if target != "v1"]
        return edges

    @staticmethod
    def cycle(edges):
        state, path = {}, []

        def visit(node):
            state[node] = "open"
            path.append(node)
            for nxt in edges.get(node, []):
                if state.get(nxt) == "open":
                    return path[path.index(nxt):] + [nxt]
                if nxt not in state:
                    found = visit(nxt)
                    if found:
                        return found
            path.pop()
            state[node] = "done"
            return None

        for node in edges:
            if node not in state:
                found = visit(node)
                if found:
                    return found
        return None

    def test_no_import_cycle(self):
        edges = self.graph()
        self.assertIn("convert", edges["client"])
        self.assertIsNone(self.cycle(edges))

    def test_a_cycle_is_found(self):
        self.assertEqual(self.cycle({"a": ["b"], "b": ["a"]}), ["a", "b", "a"])


class Helpers(unittest.TestCase):
    def setUp(self):
        self.client = ctxd.Client(server().addr)

    def tearDown(self):
        self.client.close()

    def test_every_session_helper(self):
        tools = [{"type": "function", "function": {"name": "bash", "description": "Run a command",
                                                   "parameters": {"type": "object", "properties": {}}}}]
        session = self.client.create_session(
            policy={"context_window_tokens": 16000, "max_output_tokens": 2000},
            metadata={"team": "sdk"},
            system_prompt="You are terse.",
            tools=tools,
        )
        self.assertEqual(session.info.policy.context_window_tokens, 16000)
        self.assertEqual(dict(session.get().metadata), {"team": "sdk"})
        first = session.append(
            {"role": "user", "content": "List the files, then count the lines of setup.py."},
            usage=None,
        )
        self.assertEqual(list(first.seqs), [1])
        second = session.append(
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
            ctxd.tool_result("call_1", "setup.py\nREADME.md"),
            usage={"input_tokens": 120, "output_tokens": 15},
            expected_version=first.version,
        )
        self.assertEqual(list(second.seqs), [2, 3])
        self.assertEqual(second.version, first.version + 1)

        body = session.build(ctxd.Format.OPENAI_CHAT)
        self.assertEqual(body["messages"][0], {"role": "system", "content": "You are terse."})
        self.assertEqual([m["role"] for m in body["messages"]], ["system", "user", "assistant", "tool"])
        self.assertEqual(body["messages"][2]["tool_calls"][0]["id"], "call_1")
        self.assertEqual(body["tools"][0]["function"]["name"], "bash")
        self.assertEqual(session.last_build.version, second.version)
        self.assertEqual(session.last_build.budget.breakdown.context_window_tokens, 16000)

        anthropic = session.build(ctxd.Format.ANTHROPIC_MESSAGES, system_prompt="Other.")
        # The system prompt as a text block with the cache breakpoint after it.
        self.assertEqual(anthropic["system"], [{"type": "text", "text": "Other.", "cache_control": {"type": "ephemeral"}}])
        self.assertEqual(anthropic["messages"][1]["content"][0]["type"], "tool_use")

        neutral = session.build(ctxd.Format.NEUTRAL)
        self.assertEqual([m.seq for m in neutral], [1, 2, 3])
        self.assertIsInstance(neutral[0], pb.Message)
        self.assertEqual(session.last_build.system_prompt, "You are terse.")

        report = session.check(ctxd.user("and now?"))
        without = session.check()
        self.assertGreater(report.breakdown.history_tokens, without.breakdown.history_tokens)
        self.assertEqual(report.status, pb.BUDGET_STATUS_OK)

        expanded = session.expand([3, 1])
        self.assertEqual([m.seq for m in expanded.messages], [1, 3])
        self.assertEqual(expanded.messages[1].content, "setup.py\nREADME.md")
        ranged = session.expand(first_seq=2, last_seq=3)
        self.assertEqual([m.seq for m in ranged.messages], [2, 3])
        with self.assertRaises(ValueError):
            session.expand([1], summary_id=4)

        hits = session.search("README")
        self.assertEqual([(h.session_id, h.seq) for h in hits], [(session.id, 3)])
        self.assertEqual(self.client.search("README", session_id=session.id)[0].seq, 3)
        # Within a time range: what was written since an hour ago, nothing since an hour
        # from now or before an hour ago.
        hour = datetime.timedelta(hours=1)
        now = datetime.datetime.now(datetime.timezone.utc)
        self.assertEqual([h.seq for h in session.search("README", since=now - hour)], [3])
        self.assertEqual(session.search("README", since=now + hour), [])
        self.assertEqual(self.client.search("README", session_id=session.id, until=now - hour), [])

        dry = session.compact(pb.COMPACT_MODE_CLEAR_TOOL_RESULTS, dry_run=True)
        self.assertFalse(dry.applied)
        self.assertEqual(dry.version, second.version)

        info = session.get()
        self.assertEqual(info.message_count, 3)
        self.assertEqual(info.usage_total.input_tokens, 120)
        self.assertEqual(self.client.inspect_session(session.id).budget.breakdown.context_window_tokens, 16000)

        self.assertEqual(session.delete(), 3)
        with self.assertRaises(ctxd.NotFound):
            session.get()

    def test_compaction_through_the_helpers(self):
        policy = dict(EVICTING, fresh_tail_messages=2, fresh_tail_tokens=100, tool_output_protect_tokens=100)
        session = self.client.create_session(policy=policy)
        session.append(ctxd.user("read the logs"))
        events = Puller(session.events())
        evicted = [tool_step(session, f"call_{i}") for i in range(4)]
        session.append(ctxd.assistant("done"))
        taken = events.take(4)
        self.assertTrue(all(isinstance(e, ctxd.Event) and e.compaction_completed is None for e in taken))
        self.assertEqual([e.output_evicted.seq for e in taken], evicted)
        done = session.compact(pb.COMPACT_MODE_CLEAR_TOOL_RESULTS, target_tokens=1)
        self.assertTrue(done.applied, done)
        self.assertTrue(done.cleared_seqs and set(done.cleared_seqs) <= set(evicted), done)
        self.assertLess(done.tokens_after, done.tokens_before)
        # The originals are intact.
        self.assertEqual(session.expand([done.cleared_seqs[0]]).messages[0].content, BIG_OUTPUT)
        (cleared,) = events.take(1)
        self.assertEqual(cleared.kind, pb.EVENT_KIND_TOOL_RESULTS_CLEARED)
        self.assertEqual(list(cleared.tool_results_cleared.seqs), list(done.cleared_seqs))
        # Reverting the clearing by its event's cursor: a dry run first (nothing changes),
        # then the view is back as it was, and automatic compaction waits.
        version = session.get().version
        dry = session.revert_compaction(cleared.cursor, dry_run=True)
        self.assertFalse(dry.applied)
        self.assertEqual(list(dry.restored_seqs), list(done.cleared_seqs))
        self.assertEqual(session.get().version, version)
        reverted = session.revert_compaction(cleared.cursor)
        self.assertTrue(reverted.applied)
        self.assertEqual([r.event_cursor for r in reverted.reverted], [cleared.cursor])
        self.assertEqual(reverted.tokens_after, done.tokens_before)
        views = session.expand(list(done.cleared_seqs)).messages
        self.assertEqual({m.view_state for m in views}, {pb.VIEW_STATE_EVICTED})
        stats = session.get().compaction
        self.assertTrue(stats.compaction_held)
        self.assertEqual(stats.cleared_messages, 0)
        (undone,) = events.take(1)
        self.assertEqual(undone.kind, pb.EVENT_KIND_COMPACTION_REVERTED)
        self.assertEqual(list(undone.compaction_reverted.event_seqs), [cleared.session_seq])
        with self.assertRaises(ctxd.FailedPrecondition):
            session.revert_compaction(cleared.cursor)
        with self.assertRaises(ValueError):
            session.revert_compaction(cleared.cursor, summary_id=3)
        # A session's events end with its deletion: so does the iterator.
        self.assertEqual(session.delete(), 10)
        (deleted,) = events.take(1)
        self.assertEqual(deleted.kind, pb.EVENT_KIND_SESSION_DELETED)
        with self.assertRaises(StopIteration):
            events.take(1)


class Forks(unittest.TestCase):
    """ForkSession through the protocol: the fork shares the prefix, then each side goes
    its own way; the source's deletion leaves the fork whole."""

    def setUp(self):
        self.client = ctxd.Client(server().addr)

    def tearDown(self):
        self.client.close()

    def test_a_fork_shares_the_prefix_and_diverges(self):
        source = self.client.create_session(
            policy={"context_window_tokens": 16000, "max_output_tokens": 2000},
            metadata={"team": "sdk"},
            system_prompt="You are terse.",
        )
        source.append(ctxd.user("List the files."))
        source.append(ctxd.assistant(tool_calls=[ctxd.tool_call("call_1", "bash", {"command": "ls"})]))
        source.append(ctxd.tool_result("call_1", "setup.py\nREADME.md"))
        source.append(ctxd.assistant("Two files."))
        events = Puller(source.events())

        fork = source.fork(at_seq=3, policy={"context_window_tokens": 12000}, metadata={"branch": "retry"})
        self.assertEqual(fork.system_prompt, "You are terse.")
        self.assertEqual(fork.info.forked_from_session_id, source.id)
        self.assertEqual(fork.info.forked_at_seq, 3)
        self.assertEqual(fork.info.message_count, 3)
        self.assertEqual(fork.info.requested_policy.context_window_tokens, 12000)
        self.assertEqual(dict(fork.get().metadata), {"team": "sdk", "branch": "retry"})
        (forked,) = events.take(1)
        self.assertEqual(forked.kind, pb.EVENT_KIND_SESSION_FORKED)
        self.assertEqual(
            (forked.session_forked.source_session_id, forked.session_forked.fork_session_id, forked.session_forked.at_seq),
            (source.id, fork.id, 3),
        )

        fork.append(ctxd.assistant("Let me count the lines instead."))
        source.append(ctxd.user("Thanks."))
        self.assertEqual([m.content for m in fork.expand(first_seq=1, last_seq=4).messages][3],
                         "Let me count the lines instead.")
        self.assertEqual([m.seq for m in fork.build(ctxd.Format.NEUTRAL)], [1, 2, 3, 4])
        self.assertEqual(fork.search("Thanks"), [])
        self.assertEqual([h.seq for h in fork.search("README")], [3])

        whole = self.client.fork_session(source.id)
        self.assertEqual(whole.info.message_count, 5)
        with self.assertRaises(ctxd.InvalidArgument) as raised:
            source.fork(at_seq=99)
        self.assertEqual([v.field for v in raised.exception.violations], ["at_seq"])
        with self.assertRaises(ctxd.NotFound):
            self.client.fork_session("no-such-session")
        with self.assertRaises(ctxd.AlreadyExists):
            self.client.fork_session(source.id, fork.id)

        # Deleting the source leaves the fork whole.
        self.assertEqual(source.delete(), 5)
        self.assertEqual([m.content for m in fork.expand(first_seq=1, last_seq=4).messages][2],
                         "setup.py\nREADME.md")

    def test_the_async_client_forks(self):
        async def scenario():
            async with ctxd.AsyncClient(server().addr) as client:
                source = await client.create_session()
                await source.append(ctxd.user("first"), ctxd.assistant("one"))
                fork = await source.fork("async-fork-" + source.id, at_seq=1)
                await fork.append(ctxd.assistant("another"))
                return [m.content for m in (await fork.expand(first_seq=1, last_seq=2)).messages]

        self.assertEqual(asyncio.run(scenario()), ["first", "another"])


class Listing(unittest.TestCase):
    """ListSessions: by metadata, most recently active first, page after page, sync and
    asyncio alike."""

    def test_sessions_are_listed_page_after_page(self):
        import uuid

        team = uuid.uuid4().hex
        with ctxd.Client(server().addr) as client:
            made = [client.create_session(metadata={"team": team}) for _ in range(3)]
            made[0].append(ctxd.user("most recent"))
            page = client.list_sessions(metadata={"team": team}, page_size=2)
            self.assertEqual([s.session_id for s in page.sessions], [made[0].id, made[2].id])
            self.assertNotEqual(page.next_page_token, "")
            listed = [s.session_id for s in client.sessions(metadata={"team": team}, page_size=1)]
            self.assertEqual(listed, [made[0].id, made[2].id, made[1].id])
            self.assertEqual(
                [s.session_id for s in client.sessions(metadata={"team": team}, finished=False)], listed
            )
            with self.assertRaises(ctxd.InvalidArgument):
                client.list_sessions(page_size=-1)

        async def listed_async():
            async with ctxd.AsyncClient(server().addr) as client:
                return [s.session_id async for s in client.sessions(metadata={"team": team})]

        self.assertEqual(asyncio.run(listed_async()), listed)


class Behaviour(unittest.TestCase):
    """The behaviour table both SDKs pass (clients/behaviour.json; the TypeScript suite
    reads the same file): TLS by default per target, the retry defaults, the error class
    of each gRPC code, the environment variables."""

    table = json.loads(pathlib.Path(REPO, "clients", "behaviour.json").read_text())

    def test_tls_is_on_by_default_except_for_a_loopback_target(self):
        from ctxd import requests as sdk_requests

        for case in self.table["tls_by_default"]:
            uses_tls = sdk_requests.credentials(None, case["target"]) is not None
            self.assertEqual(uses_tls, case["tls"], case["target"])
        self.assertIsNone(sdk_requests.credentials(False, "ctxd.example.com:443"))

    def test_the_retry_defaults(self):
        policy = ctxd.RetryPolicy()
        retry = self.table["retry"]
        self.assertEqual(
            (policy.max_attempts, policy.initial_backoff_s, policy.max_backoff_s),
            (retry["max_attempts"], retry["initial_backoff_s"], retry["max_backoff_s"]),
        )
        self.assertEqual({code.name for code in policy.codes}, set(retry["retried"]))

    def test_each_grpc_code_has_its_error_class(self):
        from ctxd.errors import from_rpc_error

        class Failed(grpc.RpcError):
            def __init__(self, code):
                self._code = code

            def code(self):
                return self._code

            def details(self):
                return "m"

            def trailing_metadata(self):
                return ()

        for code, name in self.table["errors"].items():
            error = from_rpc_error(Failed(grpc.StatusCode[code]))
            self.assertEqual(type(error).__name__, name, code)
            self.assertIs(getattr(ctxd, name), type(error))
            suffixed = name if name == "CtxdError" else name + "Error"
            self.assertIs(getattr(ctxd, suffixed), type(error), suffixed)
        self.assertIs(getattr(ctxd, self.table["client"]), ctxd.Client)

    def test_the_address_and_key_come_from_the_environment(self):
        env = self.table["environment"]
        saved = dict(os.environ)
        try:
            os.environ.pop(env["address"], None)
            with self.assertRaisesRegex(ValueError, env["address"]):
                ctxd.Client()
            os.environ[env["address"]] = "127.0.0.1:1"
            os.environ[env["api_key"]] = "k"
            with ctxd.Client() as client:
                self.assertIn(("authorization", "Bearer k"), client._metadata)
        finally:
            os.environ.clear()
            os.environ.update(saved)


class Typed(unittest.TestCase):
    """The helpers return frozen dataclasses with Python enums, the protocol's field names
    and the message itself as `.raw`."""

    def test_append_check_and_search_results(self):
        with ctxd.Client(server().addr) as client:
            session = client.create_session(policy={"context_window_tokens": 8000})
            appended = session.append(ctxd.user("grep for the flaky teardown"), ctxd.assistant("On it."))
            self.assertIsInstance(appended, ctxd.AppendResult)
            self.assertEqual(appended.seqs, (1, 2))
            self.assertIsInstance(appended.budget, ctxd.BudgetReport)
            assert appended.budget is not None
            self.assertIs(appended.budget.status, ctxd.BudgetStatus.OK)
            self.assertEqual(appended.raw.version, appended.version)
            with self.assertRaises(dataclasses.FrozenInstanceError):
                appended.version = 0  # type: ignore[misc]

            report = session.check(ctxd.user("and then?"))
            self.assertIsInstance(report.recommended_action, ctxd.RecommendedAction)
            assert report.breakdown is not None
            self.assertIsInstance(report.breakdown.estimate_source, ctxd.EstimateSource)
            self.assertEqual(report.breakdown.context_window_tokens, 8000)

            [hit] = session.search("flaky teardown", scope=pb.SEARCH_SCOPE_MESSAGES)
            self.assertIsInstance(hit, ctxd.SearchHit)
            self.assertEqual((hit.seq, hit.role, hit.view_state), (1, ctxd.Role.USER, ctxd.ViewState.FULL))
            assert hit.created_at is not None
            self.assertEqual(hit.created_at.tzinfo, datetime.timezone.utc)

            info = session.get()
            self.assertIsInstance(info, ctxd.SessionInfo)
            self.assertEqual((info.message_count, info.version), (2, appended.version))
            assert info.policy is not None and info.compaction is not None
            self.assertEqual(info.policy.context_window_tokens, 8000)
            self.assertIsInstance(info.compaction, ctxd.results.CompactionStats)
            expanded = session.expand(first_seq=1, last_seq=2)
            self.assertIsInstance(expanded, ctxd.ExpandResult)
            self.assertEqual([m.content for m in expanded.messages], ["grep for the flaky teardown", "On it."])
            state = session.tree()
            self.assertIsInstance(state, ctxd.SessionState)
            assert state.session is not None and state.subtree is not None
            self.assertEqual((state.session.message_count, state.subtree.sessions), (2, 1))
            ledger = session.update_ledger(todos=[{"id": "t1", "text": "fix it", "status": "in_progress"}])
            self.assertIsInstance(ledger, ctxd.LedgerUpdate)
            self.assertIs(ledger.entries[0].status, ctxd.TodoStatus.IN_PROGRESS)
            compacted = session.compact(dry_run=True)
            self.assertIsInstance(compacted, ctxd.CompactResult)
            self.assertFalse(compacted.applied)
            page = client.list_sessions(metadata={}, page_size=1)
            self.assertIsInstance(page, ctxd.SessionsPage)
            self.assertIsInstance(page.sessions[0], ctxd.SessionInfo)
            imported = client.import_session(client.export_session(session.id), session_id=session.id + "-copy")
            self.assertIsInstance(imported, ctxd.ImportResult)
            assert imported.session is not None
            self.assertEqual((imported.messages, imported.session.message_count), (2, 2))

        async def scenario():
            async with ctxd.AsyncClient(server().addr) as client:
                session = await client.create_session()
                appended = await session.append(ctxd.user("async too"))
                report = await session.check()
                return appended, report

        appended, report = asyncio.run(scenario())
        self.assertEqual((type(appended), appended.seqs), (ctxd.AppendResult, (1,)))
        self.assertIsInstance(report.status, ctxd.BudgetStatus)


class Recall(unittest.TestCase):
    """A scripted model gets back what compaction took from its request: with the
    policy's recall_tools, the body offers ctxd's recall tools; the model searches for a
    line its evicted tool result held, reads that result back (going on where each
    answer stops), and acts on the recovered line. ctxd answers every recall call."""

    OUTPUT = (
        "".join(f"tests/test_models.py::test_case_{n:03} PASSED\n" for n in range(200))
        + "tests/test_views.py::test_unicode_slug FAILED - AssertionError: zebrafish-slug\n"
        + "".join(f"tests/test_models.py::test_case_{n:03} PASSED\n" for n in range(200, 400))
    )
    BASH = [{"name": "bash", "description": "Run a command", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]

    def test_a_scripted_model_recovers_an_evicted_result(self):
        policy = {"context_window_tokens": 16000, "max_output_tokens": 2000,
                  "eviction_threshold_tokens": 300, "recall_tools": True}
        with ctxd.Client(server().addr) as client:
            session = client.create_session(policy=policy, tools=self.BASH)
            session.append(ctxd.user("Why does the slug test fail?"),
                           ctxd.assistant(tool_calls=[ctxd.tool_call("t1", "bash", {"command": "pytest"})]))
            evicted = session.append(ctxd.tool_result("t1", self.OUTPUT))
            self.assertEqual(evicted.evicted_seqs, evicted.seqs)
            body = session.build(ctxd.Format.OPENAI_CHAT)
            self.assertEqual([t["function"]["name"] for t in body["tools"]], ["bash", *ctxd.RECALL_TOOLS])
            self.assertNotIn("zebrafish", json.dumps(body["messages"]), "the preview does not hold it")

            def model_calls(call_id, tool, arguments):
                """The model's turn: one call; ctxd answers it when it is a recall call;
                returns what the next request shows as its result."""
                call = ctxd.tool_call(call_id, tool, arguments)
                session.append(ctxd.assistant(tool_calls=[call]))
                self.assertTrue(ctxd.is_recall_tool(tool))
                session.answer_recall(call_id)
                messages = session.build(ctxd.Format.OPENAI_CHAT)["messages"]
                self.assertEqual(messages[-1]["tool_call_id"], call_id)
                return messages[-1]["content"]

            found = model_calls("c1", "ctxd_recall_search", {"query": "FAILED AssertionError"})
            seq = int(re.search(r"- seq (\d+) \(tool result, not shown above\)", found).group(1))
            self.assertEqual(seq, evicted.seqs[0])
            def text_of(answer):
                """An answer's text: without its head line and its closing note."""
                text = answer.split("]\n", 1)[1]
                return re.sub(r"…?\n\[stopped at max_tokens[^\]]*\]$", "", text)

            read = model_calls("c2", "ctxd_recall_expand", {"seqs": [seq]})
            recovered, turns = text_of(read), 2
            while "zebrafish-slug" not in recovered:
                offset = int(re.search(r"and offset (\d+)\]$", read).group(1))
                read = model_calls(f"c{turns + 1}", "ctxd_recall_expand",
                                   {"first_seq": seq, "last_seq": seq, "offset": offset})
                recovered += text_of(read)
                turns += 1
                self.assertLess(turns, 20)
            self.assertTrue(self.OUTPUT.startswith(recovered.rstrip("\n")), "read back exactly, in order")
            line = re.search(r"^.*zebrafish.*$", recovered, re.M).group(0)
            session.append(ctxd.assistant(f"Found it: {line}"))
            final = session.build(ctxd.Format.OPENAI_CHAT)
            self.assertIn("AssertionError: zebrafish-slug", final["messages"][-1]["content"])
            # Each answer was announced, typed, with round 0 (a client asked).
            answered = Puller(session.events(kinds=[pb.EVENT_KIND_RECALL_ANSWERED])).take(turns)
            self.assertEqual([e.recall_answered.tool for e in answered], ["search"] + ["expand"] * (turns - 1))
            self.assertEqual({(e.recall_answered.round, e.recall_answered.error) for e in answered}, {(0, False)})
            self.assertEqual(answered[0].recall_answered.tool_call_id, "c1")
            NOTES.append(f"recall: search, then {turns - 1} expands to the line the evicted result held")


class Transfer(unittest.TestCase):
    """ExportSession / ImportSession: a file imported under another id holds the same
    messages; a changed one is refused naming its record and writes nothing; sync and
    asyncio alike."""

    def test_export_and_import(self):
        with ctxd.Client(server().addr) as client:
            session = client.create_session()
            session.append(ctxd.user("Run the tests."), ctxd.assistant("They pass."))
            file = client.export_session(session.id)
            self.assertIn(b'"format":"ctxd.session"', file.split(b"\n")[0])
            imported = client.import_session(file, session.id + "-copy")
            self.assertEqual((imported.session.session_id, imported.messages), (session.id + "-copy", 2))
            copy = client.export_session(session.id + "-copy")
            self.assertEqual(copy.split(b"\n")[2:4], file.split(b"\n")[2:4])
            changed = file.replace(b"They pass.", b"They fail.")
            with self.assertRaisesRegex(ctxd.InvalidArgument, r"\(end\)\.sha256"):
                client.import_session(changed, "changed")
            with self.assertRaises(ctxd.NotFound):
                client.get_session("changed")

        async def moved():
            async with ctxd.AsyncClient(server().addr) as client:
                again = await client.export_session(session.id)
                return await client.import_session(again, session.id + "-async")

        self.assertEqual(asyncio.run(moved()).messages, 2)


class Ledger(unittest.TestCase):
    """UpdateLedger through the helpers: todos and notes as mappings, a done todo kept
    done, a bad status refused before any call; sync and asyncio alike."""

    def test_todos_and_notes(self):
        with ctxd.Client(server().addr) as client:
            session = client.create_session()
            set_ = session.update_ledger(
                todos=[{"id": "t1", "text": "write the tests", "status": "in_progress"}],
                notes=[{"id": "n1", "text": "the fixture is slow"}],
            )
            texts = sorted(entry.text for entry in set_.entries)
            self.assertEqual(texts, ["the fixture is slow", "write the tests"])
            session.update_ledger(todos=[pb.LedgerTodo(id="t1", status=pb.TODO_STATUS_DONE)])
            reopened = client.update_ledger(session.id, todos=[{"id": "t1", "status": "pending"}])
            self.assertEqual(list(reopened.kept_done_todo_ids), ["t1"])
            with self.assertRaisesRegex(ValueError, r"todos\[0\]\.status"):
                session.update_ledger(todos=[{"id": "t2", "text": "x", "status": "later"}])

        async def noted():
            async with ctxd.AsyncClient(server().addr) as client:
                session = await client.create_session()
                return await session.update_ledger(notes=[{"id": "n", "text": "async note"}])

        self.assertEqual([e.text for e in asyncio.run(noted()).entries], ["async note"])


class Quotas(unittest.TestCase):
    """A rate quota's refusal (RESOURCE_EXHAUSTED with RetryInfo) is waited out and the
    call tried again; with retries off it reaches the caller with the server's delay."""

    def setUp(self):
        self.server = Server(env_extra={"CTXD_QUOTA_REQUESTS_PER_SEC": "2", "CTXD_QUOTA_REQUESTS_BURST": "1"})
        self.server.start()

    def tearDown(self):
        self.server.close()

    def test_a_rate_quota_is_waited_out(self):
        with ctxd.Client(self.server.addr, retry=ctxd.NO_RETRY) as client:
            with self.assertRaises(ctxd.ResourceExhausted) as refused:
                for _ in range(3):
                    client.list_sessions(page_size=1)
            self.assertIsNotNone(refused.exception.retry_delay_s)
        with ctxd.Client(self.server.addr) as client:
            pages = [client.list_sessions(page_size=1) for _ in range(4)]
        self.assertEqual(len(pages), 4)

        async def listed():
            async with ctxd.AsyncClient(self.server.addr) as client:
                return [await client.list_sessions(page_size=1) for _ in range(3)]

        self.assertEqual(len(asyncio.run(listed())), 3)


class Environment(unittest.TestCase):
    """The address and the key from CTXD_ADDRESS and CTXD_API_KEY when not passed, sync
    and asyncio alike; no address at all is a ValueError naming both."""

    def setUp(self):
        self.saved = {name: os.environ.pop(name, None) for name in ("CTXD_ADDRESS", "CTXD_API_KEY")}

    def tearDown(self):
        for name, value in self.saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value

    def test_address_and_key_from_the_environment(self):
        with self.assertRaisesRegex(ValueError, "CTXD_ADDRESS"):
            ctxd.Client()
        os.environ["CTXD_ADDRESS"] = server().addr
        with ctxd.Client() as client:
            client.create_session()
        os.environ["CTXD_API_KEY"] = "ctxd_not_a_key_this_server_knows"
        with ctxd.Client() as client:
            with self.assertRaises(ctxd.Unauthenticated):
                client.create_session()

        async def with_the_environment_key():
            async with ctxd.AsyncClient() as client:
                await client.create_session()

        with self.assertRaises(ctxd.Unauthenticated):
            asyncio.run(with_the_environment_key())


class OtlpReceiver(grpc.GenericRpcHandler):
    """An OTLP/gRPC receiver on loopback: every export request kept as the bytes it
    came as (a span's trace and span ids are in them verbatim), each answered with the
    empty response."""

    def __init__(self):
        self.traces = []
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers((self,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def service(self, handler_call_details):
        method = handler_call_details.method
        if not method.startswith("/opentelemetry.proto.collector."):
            return None

        def export(request, _context):
            if ".trace." in method:
                self.traces.append(request)
            return b""

        return grpc.unary_unary_rpc_method_handler(export)

    def saw(self, trace_id, parent_span_id):
        want_trace, want_parent = trace_id.to_bytes(16, "big"), parent_span_id.to_bytes(8, "big")
        return any(want_trace in raw and want_parent in raw for raw in self.traces)


class Tracing(unittest.TestCase):
    """With OpenTelemetry installed, a call carries the caller's current trace (W3C
    traceparent): ctxd's span for it, exported to an OTLP receiver, is in that trace,
    a child of the caller's span; sync and asyncio alike. Without a current span,
    nothing is added."""

    def setUp(self):
        self.receiver = OtlpReceiver()
        endpoint = f"http://127.0.0.1:{self.receiver.port}"
        self.server = Server(
            env_extra={
                "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                "OTEL_BSP_SCHEDULE_DELAY": "200",
                "OTEL_METRIC_EXPORT_INTERVAL": "60000",
            }
        )
        self.server.start()

    def tearDown(self):
        self.server.close()
        self.receiver.server.stop(None)

    @staticmethod
    def in_a_span(call):
        from opentelemetry import context, trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

        trace_id = int.from_bytes(os.urandom(16), "big") | 1
        span_id = int.from_bytes(os.urandom(8), "big") | 1
        span = NonRecordingSpan(SpanContext(trace_id, span_id, False, TraceFlags(TraceFlags.SAMPLED)))
        token = context.attach(trace.set_span_in_context(span))
        try:
            call()
        finally:
            context.detach(token)
        return trace_id, span_id

    def test_ctxds_span_joins_the_callers_trace(self):
        self.assertEqual(ctxd.requests.with_trace((("a", "b"),)), (("a", "b"),))
        with ctxd.Client(self.server.addr) as client:
            ids = self.in_a_span(lambda: client.create_session())
        wait_until(lambda: self.receiver.saw(*ids), "ctxd's span in the caller's trace")

        async def call_async():
            async with ctxd.AsyncClient(self.server.addr) as client:
                await client.create_session()

        ids = self.in_a_span(lambda: asyncio.run(call_async()))
        wait_until(lambda: self.receiver.saw(*ids), "ctxd's span of the async call in the caller's trace")


class Native(unittest.TestCase):
    """append_response / append_tool_results with each kind of input they take."""

    @staticmethod
    def completion(call_id, command, prompt_tokens):
        return {
            "id": f"chatcmpl-{call_id}",
            "object": "chat.completion",
            "created": 1,
            "model": "deepseek-chat",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
                "role": "assistant", "content": f"Running {command}.",
                "tool_calls": [{"id": call_id, "type": "function",
                                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 10, "total_tokens": prompt_tokens + 10},
        }

    def test_sdk_objects_dicts_and_json_text(self):
        import openai.types.chat as chat

        with ctxd.Client(server().addr) as client:
            session = client.create_session()
            session.append(ctxd.user("look around"))
            # The official SDK's response object.
            reply = chat.ChatCompletion.model_validate(self.completion("call_o1", "ls", 100))
            first = session.append_response(reply, ctxd.Format.OPENAI_CHAT)
            # Tool results as the SDK's param TypedDict (a dict), then as JSON text.
            result: chat.ChatCompletionToolMessageParam = {"role": "tool", "tool_call_id": "call_o1", "content": "a.py"}
            session.append_tool_results([result], ctxd.Format.OPENAI_CHAT)
            # A dict reply with its tool result as `items` in the same call.
            both = session.append_response(
                self.completion("call_o2", "cat a.py", 140),
                ctxd.Format.OPENAI_CHAT,
                items=[ctxd.ToolResult("call_o2", "print(1)")],
            )
            self.assertEqual(len(both.seqs), 2)
            # JSON text for both.
            session.append_response(json.dumps(self.completion("call_o3", "wc -l a.py", 170)), ctxd.Format.OPENAI_CHAT)
            session.append_tool_results(
                json.dumps([{"role": "tool", "tool_call_id": "call_o3", "content": "1 a.py"}]), ctxd.Format.OPENAI_CHAT
            )
            log = session.expand(first_seq=1, last_seq=7).messages
            self.assertEqual([m.role for m in log], [pb.ROLE_USER] + [pb.ROLE_ASSISTANT, pb.ROLE_TOOL] * 3)
            self.assertEqual([m.tool_calls[0].id for m in log[1::2]], ["call_o1", "call_o2", "call_o3"])
            self.assertEqual([m.content for m in log[2::2]], ["a.py", "print(1)", "1 a.py"])
            self.assertEqual(log[1].content, "Running ls.")
            self.assertEqual(json.loads(log[3].tool_calls[0].arguments_json), {"command": "cat a.py"})
            info = session.get()
            self.assertEqual(info.usage_total.input_tokens, 100 + 140 + 170, "each reply's usage counted")
            self.assertEqual(info.estimator.anchor_input_tokens, 170)
            self.assertEqual(first.seqs[0], 2)

    def test_a_bad_body_names_its_json_path(self):
        with ctxd.Client(server().addr) as client:
            session = client.create_session()
            session.append(ctxd.user("hi"))
            reply = self.completion("call_x", "ls", 10)
            reply["choices"][0]["message"]["tool_calls"][0]["id"] = ""
            with self.assertRaises(ctxd.InvalidArgument) as caught:
                session.append_response(reply, ctxd.Format.OPENAI_CHAT)
            (violation,) = caught.exception.violations
            self.assertTrue(violation.field.startswith("response_json: $.choices[0].message.tool_calls[0]"), violation)
            self.assertEqual(session.get().message_count, 1, "nothing appended")
            with self.assertRaises(ValueError):
                session.append_response(reply, ctxd.Format.NEUTRAL)


class Errors(unittest.TestCase):
    def setUp(self):
        self.client = ctxd.Client(server().addr)
        self.session = self.client.create_session(policy={"context_window_tokens": 4000, "max_output_tokens": 500})
        self.session.append(ctxd.user("hello"))

    def tearDown(self):
        self.client.close()

    def test_invalid_argument_carries_the_field_violations(self):
        with self.assertRaises(ctxd.InvalidArgument) as caught:
            self.session.append(ctxd.user("fine"), ctxd.tool_result("call_nope", "x"))
        error = caught.exception
        self.assertEqual([v.field for v in error.violations], ["messages[1].tool_call_id"])
        self.assertIn("call_nope", error.violations[0].description)
        self.assertIsInstance(error, ctxd.CtxdError)
        self.assertEqual(self.session.get().message_count, 1, "nothing appended")

    def test_conflict_carries_the_current_version(self):
        version = self.session.get().version
        with self.assertRaises(ctxd.Conflict) as caught:
            self.session.append(ctxd.user("late"), expected_version=version - 1)
        self.assertEqual(caught.exception.current_version, version)
        self.assertEqual(caught.exception.reason, "VERSION_MISMATCH")
        self.assertIs(ctxd.Aborted, ctxd.Conflict)

    def test_does_not_fit_carries_the_breakdown(self):
        with self.assertRaises(ctxd.DoesNotFit) as caught:
            self.session.build(ctxd.Format.OPENAI_CHAT, system_prompt="word " * 5000)
        breakdown = caught.exception.breakdown
        self.assertEqual(breakdown["context_window_tokens"], 4000)
        self.assertEqual(breakdown["output_reserve_tokens"], 500)
        self.assertEqual(breakdown["available_tokens"], 3500)
        self.assertGreater(breakdown["system_tokens"], 3500)
        self.assertGreater(breakdown["newest_turn_tokens"], 0)
        self.assertIsInstance(caught.exception, ctxd.FailedPrecondition)

    def test_not_found_already_exists_unauthenticated(self):
        with self.assertRaises(ctxd.NotFound):
            self.client.get_session("no-such-session")
        with self.assertRaises(ctxd.AlreadyExists):
            self.client.create_session(self.session.id)
        with ctxd.Client(server().addr, api_key="ctxd_not_a_key") as stranger:
            with self.assertRaises(ctxd.Unauthenticated):
                stranger.get_session(self.session.id)

    def test_resource_exhausted_carries_the_retry_delay(self):
        limited = Server({"CTXD_QUOTA_REQUESTS_PER_SEC": "0.2", "CTXD_QUOTA_REQUESTS_BURST": "1"})
        limited.start()
        try:
            with ctxd.Client(limited.addr, retry=ctxd.NO_RETRY) as client:
                client.get_session(self.session.id)
                with self.assertRaises(ctxd.ResourceExhausted) as caught:
                    client.get_session(self.session.id)
        finally:
            limited.close()
        error = caught.exception
        self.assertIsNotNone(error.retry_delay_s)
        self.assertGreater(error.retry_delay_s, 0)
        self.assertLessEqual(error.retry_delay_s, 5.0)
        self.assertEqual([v.subject for v in error.violations], ["quota_requests_per_sec"])


class Retries(unittest.TestCase):
    def setUp(self):
        self.proxy = CuttingProxy(server().addr)

    def tearDown(self):
        self.proxy.close()

    def contents(self, session_id):
        """The session's log, read on a connection of its own."""
        with ctxd.Client(server().addr) as client:
            count = client.get_session(session_id).message_count
            return [m.content for m in client.session(session_id).expand(first_seq=1, last_seq=count).messages]

    def test_a_retried_append_is_applied_once(self):
        """The connection drops after the server committed the append; the automatic
        retry carries the same idempotency key and is answered with the stored response."""
        with ctxd.Client(self.proxy.addr) as client:
            session = client.create_session()
            session.append(ctxd.user("warm up the connection"))
            self.proxy.arm()
            response = session.append(ctxd.user("exactly once"))
            self.assertEqual(self.proxy.cuts, 1, "the first answer was cut")
            self.assertTrue(response.replayed, "the retry was answered from the first attempt")
            self.assertEqual(list(response.seqs), [2])
            self.assertEqual(self.contents(session.id), ["warm up the connection", "exactly once"])

    def test_a_retried_native_append_is_applied_once(self):
        """The same for AppendNative: a provider reply and its tool result, answer cut."""
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "deepseek-chat",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": "call_n1", "type": "function",
                                "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59},
        }
        with ctxd.Client(self.proxy.addr) as client:
            session = client.create_session()
            session.append(ctxd.user("list the files"))
            self.proxy.arm()
            response = session.append_response(json.dumps(reply), ctxd.Format.OPENAI_CHAT)
            self.assertTrue(response.replayed)
            self.assertEqual(list(response.seqs), [2])
            self.proxy.arm()
            results = session.append_tool_results([ctxd.ToolResult("call_n1", "setup.py")], ctxd.Format.OPENAI_CHAT)
            self.assertTrue(results.replayed)
            self.assertEqual(list(results.seqs), [3])
            self.assertEqual(self.proxy.cuts, 2)
            self.assertEqual(self.contents(session.id), ["list the files", "", "setup.py"])
            self.assertEqual(session.get().usage_total.input_tokens, 50, "the usage counted once")

    def test_a_retried_create_finds_the_session_it_made(self):
        with ctxd.Client(self.proxy.addr) as client:
            client.search("warm up the connection")
            self.proxy.arm()
            session = client.create_session(policy={"context_window_tokens": 9000})
            self.assertEqual(self.proxy.cuts, 1)
            self.assertEqual(session.info.session_id, session.id)
            self.assertEqual(session.info.policy.context_window_tokens, 9000)
            with self.assertRaises(ctxd.AlreadyExists):  # not retried: the id was taken before
                client.create_session(session.id)

    def test_a_retried_fork_finds_the_fork_it_made(self):
        with ctxd.Client(self.proxy.addr) as client:
            source = client.create_session()
            source.append(ctxd.user("shared"))
            self.proxy.arm()
            fork = source.fork()
            self.assertEqual(self.proxy.cuts, 1)
            self.assertEqual(fork.info.forked_from_session_id, source.id)
            self.assertEqual(fork.info.message_count, 1)

    def test_the_async_client_retries_an_append_once(self):
        async def scenario():
            async with ctxd.AsyncClient(self.proxy.addr) as client:
                session = await client.create_session()
                await session.append(ctxd.user("warm up"))
                self.proxy.arm()
                response = await session.append(ctxd.user("exactly once, async"))
                self.assertTrue(response.replayed)
                return session.id

        session_id = asyncio.run(scenario())
        self.assertEqual(self.proxy.cuts, 1)
        self.assertEqual(self.contents(session_id), ["warm up", "exactly once, async"])

    def test_the_cut_happens_after_the_commit(self):
        """Without retries the caller sees UNAVAILABLE although the append was made: a
        retry without the same key would have appended it twice."""
        with ctxd.Client(self.proxy.addr, retry=ctxd.NO_RETRY) as client:
            session = client.create_session()
            session.append(ctxd.user("warm up"))
            self.proxy.arm()
            with self.assertRaises(ctxd.Unavailable):
                session.append(ctxd.user("committed, answer lost"))
            self.assertEqual(self.contents(session.id), ["warm up", "committed, answer lost"])

    def test_retries_reach_a_restarted_server(self):
        with ctxd.Client(self.proxy.addr, retry=ctxd.RetryPolicy(max_attempts=1000, max_elapsed_s=90)) as client:
            session = client.create_session()
            server().stop()
            refused_before = self.proxy.refused
            outcome = {}

            def append():
                try:
                    outcome["response"] = session.append(ctxd.user("while the server restarts"))
                except BaseException as error:
                    outcome["error"] = error

            worker = threading.Thread(target=append)
            worker.start()
            wait_until(lambda: self.proxy.refused >= refused_before + 2, "two refused attempts")
            server().start()
            worker.join(timeout=90)
            self.assertNotIn("error", outcome)
            self.assertEqual(list(outcome["response"].seqs), [1])
            self.assertEqual(self.contents(session.id), ["while the server restarts"])


class Tls(unittest.TestCase):
    def test_mutual_tls_with_the_tls_setting(self):
        # test_tls makes the certificates and runs a TLS server; it reads the stubs from
        # CTXD_STUBS, and the installed package provides the same ctxd.v1 modules.
        os.environ.setdefault("CTXD_STUBS", os.path.dirname(os.path.abspath(__file__)))
        import test_tls

        client_ca = test_tls.Issuer("ctxd client CA")
        tls_server = test_tls.Server()
        test_tls.write(tls_server.path("client-ca.pem"), client_ca.pem())
        tls_server.extra_args = ["--tls-client-ca", tls_server.path("client-ca.pem")]
        cert, key = client_ca.issue("backend-sdk", client=True)
        tls_server.client_identity = (cert, key)
        tls_server.start()
        self.addCleanup(tls_server.stop)
        trusted = ctxd.Tls(root_certificates=tls_server.ca.pem(), certificate_chain=cert, private_key=key)
        with ctxd.Client(tls_server.addr, tls=trusted) as client:
            session = client.create_session()
            self.assertEqual(session.get().session_id, session.id)
        anonymous = ctxd.Tls(root_certificates=tls_server.ca.pem())
        with ctxd.Client(tls_server.addr, tls=anonymous, retry=ctxd.NO_RETRY) as client:
            with self.assertRaises(ctxd.Unavailable):
                client.create_session()
        with ctxd.Client(tls_server.addr, tls=True, retry=ctxd.NO_RETRY) as client:
            with self.assertRaises(ctxd.Unavailable):  # the system's CAs do not know the test CA
                client.create_session()
        with ctxd.Client(tls_server.addr, retry=ctxd.NO_RETRY) as client:
            with self.assertRaises(ctxd.Unavailable):  # plaintext
                client.create_session()


class Events(unittest.TestCase):
    def test_events_resume_across_a_server_restart(self):
        with ctxd.Client(server().addr) as client:
            session = client.create_session(policy=EVICTING)
            session.append(ctxd.user("read the logs"))
            iterator = session.events(kinds=[pb.EVENT_KIND_OUTPUT_EVICTED], heartbeat_interval_ms=200)
            puller = Puller(iterator)
            before = [tool_step(session, f"call_a{i}") for i in range(3)]
            got = puller.take(3)
            self.assertEqual([e.output_evicted.seq for e in got], before)

            server().stop()
            server().start()
            after = [tool_step(session, f"call_b{i}") for i in range(3)]
            got += puller.take(3)
            self.assertEqual([e.output_evicted.seq for e in got], before + after, "none lost, none repeated")
            seqs = [e.session_seq for e in got]
            self.assertEqual(seqs, sorted(set(seqs)))
            self.assertEqual(len({e.event_id for e in got}), 6)
            NOTES.append(f"events: 3 before and 3 after a restart, session_seq {seqs}")

    def test_events_resume_after_a_stream_reset(self):
        proxy = CuttingProxy(server().addr)
        self.addCleanup(proxy.close)
        with ctxd.Client(proxy.addr) as client:
            session = client.create_session(policy=EVICTING)
            session.append(ctxd.user("read the logs"))
            puller = Puller(session.events(kinds=[pb.EVENT_KIND_OUTPUT_EVICTED], heartbeat_interval_ms=100))
            before = [tool_step(session, f"call_a{i}") for i in range(2)]
            got = puller.take(2)
            proxy.reset_next_stream()
            wait_until(lambda: proxy.resets == 1, "the events stream reset (its next heartbeat)")
            after = [tool_step(session, f"call_b{i}") for i in range(2)]
            got += puller.take(2)
            self.assertEqual([e.output_evicted.seq for e in got], before + after, "none lost, none repeated")

    def test_async_client_and_events_resume(self):
        async def scenario():
            async with ctxd.AsyncClient(server().addr) as client:
                session = await client.create_session(policy=EVICTING, system_prompt="Be brief.")
                await session.append(ctxd.user("read the logs"))
                events = session.events(kinds=[pb.EVENT_KIND_OUTPUT_EVICTED], heartbeat_interval_ms=200)
                seqs = []
                for i in range(2):
                    await session.append(ctxd.assistant(tool_calls=[ctxd.tool_call(f"c{i}", "bash", {})]))
                    seqs.append((await session.append(ctxd.tool_result(f"c{i}", BIG_OUTPUT))).seqs[0])
                got = [await asyncio.wait_for(events.__anext__(), 60) for _ in range(2)]
                await asyncio.to_thread(server().stop)
                await asyncio.to_thread(server().start)
                for i in range(2, 4):
                    await session.append(ctxd.assistant(tool_calls=[ctxd.tool_call(f"c{i}", "bash", {})]))
                    seqs.append((await session.append(ctxd.tool_result(f"c{i}", BIG_OUTPUT))).seqs[0])
                got += [await asyncio.wait_for(events.__anext__(), 60) for _ in range(2)]
                self.assertEqual([e.output_evicted.seq for e in got], seqs)
                await events.aclose()

                body = await session.build(ctxd.Format.OPENAI_CHAT)
                self.assertEqual(body["messages"][0], {"role": "system", "content": "Be brief."})
                self.assertEqual(len(await session.build(ctxd.Format.NEUTRAL)), 9)
                version = (await session.get()).version
                with self.assertRaises(ctxd.Conflict) as caught:
                    await session.append(ctxd.user("late"), expected_version=version - 1)
                self.assertEqual(caught.exception.current_version, version)
                self.assertEqual((await session.check()).status, pb.BUDGET_STATUS_OK)
                self.assertEqual((await session.expand([1])).messages[0].content, "read the logs")
                self.assertEqual(len(await session.search("logs")), 1)
                with self.assertRaises(ctxd.NotFound):
                    await session.revert_compaction(summary_id=10**9)
                self.assertEqual(await session.delete(), 9)

        asyncio.run(scenario())


class Subagents(unittest.TestCase):
    """A subagent's session through the protocol: spawned for the lead's tool call with a
    policy of its own, finished with its answer appended as that call's result."""

    LEAD = {"context_window_tokens": 100000, "max_output_tokens": 8000}
    SMALL = {"context_window_tokens": 8000, "max_output_tokens": 1000}

    def setUp(self):
        self.client = ctxd.Client(server().addr)

    def tearDown(self):
        self.client.close()

    def test_a_subagent_answers_its_leads_tool_call(self):
        lead = self.client.create_session(f"lead-{time.monotonic_ns()}", policy=self.LEAD)
        lead.append(
            ctxd.user("Why does the build fail?"),
            ctxd.assistant(tool_calls=[ctxd.tool_call("call-r", "research", {"question": "the build"})]),
        )
        child = lead.spawn("call-r", policy=self.SMALL)
        self.assertEqual(
            (child.info.parent_session_id, child.info.parent_tool_call_id, child.info.depth),
            (lead.id, "call-r", 1),
        )
        self.assertEqual(child.info.policy.context_window_tokens, 8000)
        child.append(ctxd.user("read the build log"), ctxd.assistant("src/lib.rs misses a semicolon"),
                     usage={"input_tokens": 120, "output_tokens": 30})
        answer = "The build fails: src/lib.rs misses a semicolon at line 12."
        done = child.finish(answer)
        self.assertEqual(list(done.parent_append.seqs), [3])
        self.assertEqual(done.parent_session_id, lead.id)
        body = lead.build(ctxd.Format.OPENAI_CHAT)
        last = body["messages"][-1]
        self.assertEqual((last["role"], last["tool_call_id"], last["content"]), ("tool", "call-r", answer))
        tree = lead.tree()
        self.assertEqual(
            [(c.session_id, c.parent_tool_call_id, c.finished) for c in tree.children], [(child.id, "call-r", True)]
        )
        self.assertEqual(tree.subtree.sessions, 2)
        self.assertEqual(tree.subtree.usage_total.input_tokens, 120)
        self.assertIsNotNone(child.get().finished_at)
        hits = self.client.search("semicolon", tree_root_session_id=lead.id)
        self.assertEqual({hit.session_id for hit in hits}, {lead.id, child.id})

        # A finished session takes no appends; the lead's answered call spawns nothing.
        with self.assertRaises(ctxd.FailedPrecondition) as finished:
            child.append(ctxd.user("one more thing"))
        self.assertEqual(finished.exception.field, "session_id")
        with self.assertRaises(ctxd.FailedPrecondition) as again:
            child.finish()
        self.assertEqual(again.exception.field, "session_id")
        with self.assertRaises(ctxd.InvalidArgument) as answered:
            lead.spawn("call-r")
        self.assertEqual([v.field for v in answered.exception.violations], ["parent_tool_call_id"])
        with self.assertRaises(ctxd.NotFound):
            self.client.create_session(parent_session_id="nobody", parent_tool_call_id="call-r")
        with self.assertRaises(ctxd.FailedPrecondition) as rootless:
            lead.finish("an answer for no one")
        self.assertEqual(rootless.exception.field, "append_to_parent")

    def test_the_async_client_spawns_and_finishes(self):
        async def scenario():
            async with ctxd.AsyncClient(server().addr) as client:
                lead = await client.create_session(f"alead-{time.monotonic_ns()}", policy=self.LEAD)
                await lead.append(
                    ctxd.user("Summarize the logs."),
                    ctxd.assistant(tool_calls=[ctxd.tool_call("call-a", "research", {"topic": "logs"})]),
                )
                child = await lead.spawn("call-a", f"{lead.id}.sub", policy=self.SMALL)
                self.assertEqual(child.info.parent_session_id, lead.id)
                done = await child.finish("nothing unusual in the logs")
                self.assertEqual(list(done.parent_append.seqs), [3])
                expanded = await lead.expand([3])
                self.assertEqual(expanded.messages[0].content, "nothing unusual in the logs")
                self.assertEqual(expanded.messages[0].metadata["ctxd.subagent_session_id"], child.id)
                tree = await child.tree()
                self.assertEqual((tree.session.parent_session_id, tree.subtree.sessions), (lead.id, 1))

        asyncio.run(scenario())


def main():
    started = time.monotonic()
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    test_errors = [test for test, _ in result.errors if isinstance(test, unittest.TestCase)]
    passed = result.testsRun - len(result.failures) - len(test_errors) - len(result.skipped)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"\nctxd python SDK ({time.monotonic() - started:.1f} s):")
    for note in NOTES:
        print(f"  {note}")
    if not result.wasSuccessful() and "server" in SERVER:
        print(f"\nserver log tail:\n{SERVER['server'].log_tail()}")
    print(f"python-sdk: {passed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
