"""ctxd from Python: the gRPC protocol as a backend written in another language uses it.

Run by tests/python/run, which passes:
  CTXD_BIN    the server binary, started here as `CTXD_BIN serve` on a free loopback
              port (DATABASE_URL, when set, is inherited; otherwise the server starts a
              private PostgreSQL in its data directory)
  CTXD_STUBS  a directory holding the stubs generated from proto/ (ctxd/v1/ctxd_pb2*.py)
Optional: CTXD_TEST_API_KEY, sent as `authorization: Bearer <key>` when the database
already holds API keys.

Plain unittest; prints one line per test and a closing "N passed, N failed" line.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.environ["CTXD_STUBS"])

import grpc  # noqa: E402
from google.protobuf import descriptor_pool  # noqa: E402
from google.rpc import error_details_pb2  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (  # noqa: E402
    ProtoReflectionDescriptorDatabase,
)
from grpc_status import rpc_status  # noqa: E402

from ctxd.v1 import ctxd_pb2 as pb  # noqa: E402
from ctxd.v1 import ctxd_pb2_grpc as pb_grpc  # noqa: E402

SERVICE = "ctxd.v1.ContextService"
RPCS = {"CreateSession", "GetSession", "DeleteSession", "AppendTurn", "BuildMessages", "CheckBudget"}
START_DEADLINE_S = 60
STOP_DEADLINE_S = 30
RPC_TIMEOUT_S = 15

SYSTEM_PROMPT = "You are a careful coding agent. Use the bash tool to inspect the repository."
BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The bash command to execute"}},
    "required": ["command"],
}
BASH_TOOL = pb.ToolDefinition(
    name="bash",
    description="Execute a bash command and return its output",
    parameters_json_schema=json.dumps(BASH_SCHEMA),
)
TOOLS = pb.Tools(definitions=pb.ToolDefinitionList(items=[BASH_TOOL]))

# The running server, shared by every test (setUpModule / tearDownModule).
SERVER = {}
# Figures worth showing in the closing summary.
NOTES = []


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log_tail(lines=40):
    try:
        with open(SERVER["log_path"], encoding="utf-8", errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return "(no server log)"


def wait_serving(addr, process):
    """Polls the gRPC health service until it says SERVING for the context service."""
    deadline = time.monotonic() + START_DEADLINE_S
    last = "no answer yet"
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"ctxd exited with {process.returncode} before serving; log tail:\n{log_tail()}"
            )
        # A fresh channel per attempt: a refused connection must not leave us in the
        # channel's reconnect backoff while the server comes up.
        with grpc.insecure_channel(addr) as channel:
            try:
                response = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=SERVICE), timeout=2
                )
                if response.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
            except grpc.RpcError as error:
                last = f"{error.code().name}: {error.details()}"
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"ctxd was not SERVING within {START_DEADLINE_S} s (last: {last}); log tail:\n{log_tail()}"
            )
        time.sleep(0.1)


def setUpModule():
    binary = os.environ["CTXD_BIN"]
    tmp = tempfile.TemporaryDirectory(prefix="ctxd-py-")
    SERVER["tmp"] = tmp
    SERVER["log_path"] = os.path.join(tmp.name, "ctxd.log")
    addr = f"127.0.0.1:{free_port()}"
    data_dir = os.path.join(tmp.name, "data")
    log = open(SERVER["log_path"], "wb")
    started = time.monotonic()
    # Server defaults only: a developer's CTXD_* settings (policy defaults, config file)
    # must not change what the tests see. DATABASE_URL is inherited.
    env = {name: value for name, value in os.environ.items() if not name.startswith("CTXD_")}
    # On the suite's database (DATABASE_URL) ctxd refuses calls without a key unless told.
    env["CTXD_ANONYMOUS_ACCESS"] = "allow"
    process = subprocess.Popen(
        [binary, "serve", "--listen", addr, "--data-dir", data_dir],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    SERVER["process"] = process
    try:
        wait_serving(addr, process)
    except BaseException:
        stop(process)
        raise
    SERVER["start_s"] = time.monotonic() - started
    channel = grpc.insecure_channel(addr)
    SERVER["addr"] = addr
    SERVER["channel"] = channel
    SERVER["stub"] = pb_grpc.ContextServiceStub(channel)


def stop(process):
    """SIGTERM (which also stops a private PostgreSQL), SIGKILL only as a last resort.
    Returns the exit code, or None when the server had to be killed."""
    if process.poll() is not None:
        return process.returncode
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def tearDownModule():
    process = SERVER.get("process")
    if process is None or "channel" not in SERVER:
        return
    # The client connection stays open across the stop, as a live backend's would.
    stopping = time.monotonic()
    code = stop(process)
    SERVER["channel"].close()
    if code is None:
        raise AssertionError(f"ctxd did not stop within {STOP_DEADLINE_S} s of SIGTERM; log tail:\n{log_tail()}")
    if code != 0:
        raise AssertionError(f"ctxd exited with {code} after SIGTERM; log tail:\n{log_tail()}")
    NOTES.append(
        f"server: SERVING after {SERVER['start_s']:.1f} s, "
        f"exit 0 {time.monotonic() - stopping:.1f} s after SIGTERM"
    )


def metadata():
    key = os.environ.get("CTXD_TEST_API_KEY")
    return (("authorization", f"Bearer {key}"),) if key else ()


def call(method, request):
    """Calls one RPC of the context service with the test's metadata and timeout."""
    return getattr(SERVER["stub"], method)(request, timeout=RPC_TIMEOUT_S, metadata=metadata())


def new_session_id(name):
    return f"py-{name}-{uuid.uuid4().hex[:12]}"


def user(text):
    return pb.Message(role=pb.ROLE_USER, content=text)


def assistant(text="", calls=()):
    return pb.Message(role=pb.ROLE_ASSISTANT, content=text, tool_calls=list(calls))


def tool_call(call_id, command):
    return pb.ToolCall(id=call_id, name="bash", arguments_json=json.dumps({"command": command}))


def tool_result(call_id, text):
    return pb.Message(role=pb.ROLE_TOOL, tool_call_id=call_id, content=text)


def openai_pairs_ok(messages):
    """In an OpenAI body: every tool call is answered, every tool message answers an
    earlier, so far unanswered call. Returns a problem description or None."""
    pending = set()
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if message.get("tool_call_id") not in pending:
                return f"messages[{index}] answers {message.get('tool_call_id')!r}, not an open call"
            pending.remove(message["tool_call_id"])
        elif pending:
            return f"messages[{index}] ({message['role']}) comes before calls {sorted(pending)} are answered"
        for tool_call_ in message.get("tool_calls") or []:
            pending.add(tool_call_["id"])
    if pending:
        return f"calls {sorted(pending)} have no result"
    return None


class Rpc(unittest.TestCase):
    maxDiff = None

    def assertRpcError(self, code, method, request):
        with self.assertRaises(grpc.RpcError) as raised:
            call(method, request)
        error = raised.exception
        self.assertEqual(error.code(), code, f"{method}: {error.details()}")
        return error

    def create(self, name, **policy):
        session_id = new_session_id(name)
        response = call(
            "CreateSession",
            pb.CreateSessionRequest(session_id=session_id, policy=pb.Policy(**policy)),
        )
        self.assertEqual(response.session.session_id, session_id)
        for field, value in policy.items():
            self.assertEqual(getattr(response.session.policy, field), value, field)
        self.assertEqual(response.session.message_count, 0)
        return session_id, response.session

    def get(self, session_id):
        return call("GetSession", pb.GetSessionRequest(session_id=session_id)).session

    def append(self, session_id, *messages, **fields):
        return call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=messages, **fields))


class AgentLoop(Rpc):
    def test_agent_loop_openai_chat(self):
        """A backend's loop: build, call the model (simulated), record, check budget."""
        session_id, session = self.create("loop", context_window_tokens=8000, max_output_tokens=1000)
        version = session.version
        seqs = []
        reported_input = []
        reported_output = []

        def appended(response, count):
            nonlocal version
            self.assertFalse(response.replayed)
            self.assertEqual(response.version, version + 1, "version grows by one per AppendTurn")
            version = response.version
            self.assertEqual(len(response.seqs), count)
            seqs.extend(response.seqs)

        appended(self.append(session_id, user("How many Rust files are in src/? Count them.")), 1)

        commands = ["ls src", "ls src/store", "find src -name '*.rs' | wc -l"]
        outputs = [
            "api.rs\nauth.rs\nbudget.rs\nconfig.rs\nengine.rs\nerror.rs\nlib.rs\nmain.rs\nstore",
            "messages.rs\nmod.rs\nsessions.rs\ntenants.rs",
            "20",
        ]
        previous_reported = None
        for step, (command, output) in enumerate(zip(commands, outputs)):
            built = call(
                "BuildMessages",
                pb.BuildMessagesRequest(
                    session_id=session_id,
                    system_prompt=SYSTEM_PROMPT,
                    tools=TOOLS,
                    format=pb.OUTPUT_FORMAT_OPENAI_CHAT,
                ),
            )
            self.assertEqual(built.version, version)
            self.assertEqual(len(built.messages), 0, "OPENAI_CHAT puts everything in json")
            body = json.loads(built.json)
            messages = body["messages"]
            self.assertEqual(messages[0], {"role": "system", "content": SYSTEM_PROMPT})
            self.assertEqual(len(messages), 1 + len(seqs), "the whole history fits: nothing left out")
            self.assertEqual(messages[1], {"role": "user", "content": "How many Rust files are in src/? Count them."})
            self.assertEqual(
                body["tools"],
                [
                    {
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "description": BASH_TOOL.description,
                            "parameters": BASH_SCHEMA,
                        },
                    }
                ],
            )
            self.assertIsNone(openai_pairs_ok(messages))
            calls_in_body = [c for m in messages for c in m.get("tool_calls") or []]
            self.assertEqual([c["id"] for c in calls_in_body], [f"call_{i}" for i in range(step)])
            for i, c in enumerate(calls_in_body):
                self.assertEqual(c["type"], "function")
                self.assertEqual(c["function"]["name"], "bash")
                self.assertEqual(json.loads(c["function"]["arguments"]), {"command": commands[i]})
            results = [m for m in messages if m["role"] == "tool"]
            self.assertEqual([m["content"] for m in results], outputs[:step])
            self.assertEqual((built.first_seq, built.last_seq), (1, len(seqs)))
            self.assertEqual(built.trimmed.turns, 0)
            self.assertEqual(built.trimmed.messages, 0)
            budget = built.budget
            self.assertEqual(budget.status, pb.BUDGET_STATUS_OK)
            self.assertEqual(budget.recommended_action, pb.RECOMMENDED_ACTION_NONE)
            self.assertEqual(budget.breakdown.context_window_tokens, 8000)
            self.assertEqual(budget.breakdown.output_reserve_tokens, 1000)
            self.assertGreater(budget.breakdown.system_tokens, 0)
            self.assertGreater(budget.breakdown.tool_tokens, 0)
            self.assertGreater(budget.breakdown.history_tokens, 0)
            self.assertGreater(budget.breakdown.total_tokens, 0)
            self.assertEqual(
                budget.breakdown.headroom_tokens,
                8000 - 1000 - budget.breakdown.total_tokens,
                "headroom = hard_limit x window - reserve - total",
            )
            if previous_reported is None:
                self.assertEqual(budget.breakdown.estimate_source, pb.ESTIMATE_SOURCE_TOKENIZER)
                self.assertEqual(budget.breakdown.total_tokens, budget.breakdown.tokenizer_total_tokens)
            else:
                # Same start as the anchored request, more after it: reported + the rest.
                self.assertEqual(budget.breakdown.estimate_source, pb.ESTIMATE_SOURCE_ANCHORED)
                self.assertGreater(budget.breakdown.total_tokens, previous_reported)

            # The model answers with a tool call; the provider counted a few tokens more
            # than ctxd's estimate.
            previous_reported = budget.breakdown.total_tokens + 5
            reported_input.append(previous_reported)
            reported_output.append(30 + step)
            call_id = f"call_{step}"
            response = self.append(
                session_id,
                assistant(calls=[tool_call(call_id, command)]),
                usage=pb.Usage(input_tokens=previous_reported, output_tokens=30 + step),
            )
            appended(response, 1)
            appended(self.append(session_id, tool_result(call_id, output)), 1)

            checked = call(
                "CheckBudget",
                pb.CheckBudgetRequest(session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS),
            ).budget
            self.assertEqual(checked.status, pb.BUDGET_STATUS_OK)
            self.assertEqual(checked.recommended_action, pb.RECOMMENDED_ACTION_NONE)
            self.assertEqual(checked.breakdown.estimate_source, pb.ESTIMATE_SOURCE_ANCHORED)
            self.assertGreater(checked.breakdown.total_tokens, previous_reported)
            self.assertEqual(checked.breakdown.output_reserve_tokens, 1000)

        # The final answer, with its usage.
        built = call(
            "BuildMessages",
            pb.BuildMessagesRequest(
                session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS, format=pb.OUTPUT_FORMAT_OPENAI_CHAT
            ),
        )
        body = json.loads(built.json)
        self.assertIsNone(openai_pairs_ok(body["messages"]))
        self.assertEqual(body["messages"][-1], {"role": "tool", "tool_call_id": "call_2", "content": "20"})
        reported_input.append(built.budget.breakdown.total_tokens + 3)
        reported_output.append(12)
        appended(
            self.append(
                session_id,
                assistant("There are 20 Rust files under src/."),
                usage=pb.Usage(input_tokens=reported_input[-1], output_tokens=12),
            ),
            1,
        )

        message_count = 1 + 2 * len(commands) + 1
        self.assertEqual(seqs, list(range(1, message_count + 1)), "seqs are 1..N without gaps")
        final = self.get(session_id)
        self.assertEqual(final.version, version)
        self.assertEqual(final.version, session.version + 1 + 2 * len(commands) + 1)
        self.assertEqual(final.message_count, message_count)
        self.assertEqual(final.turn_count, 1)
        self.assertGreater(final.log_tokens, 0)
        self.assertGreater(final.estimator.samples, 0, "usage reports feed the estimator")
        self.assertLessEqual(final.estimator.samples, len(reported_input))
        self.assertEqual(final.estimator.anchor_input_tokens, reported_input[-1])
        self.assertEqual(final.usage_total.input_tokens, sum(reported_input))
        self.assertEqual(final.usage_total.output_tokens, sum(reported_output))

        # NEUTRAL: the stored messages themselves, in order.
        neutral = call(
            "BuildMessages", pb.BuildMessagesRequest(session_id=session_id, format=pb.OUTPUT_FORMAT_NEUTRAL)
        )
        self.assertEqual(neutral.json, "")
        self.assertEqual([m.seq for m in neutral.messages], seqs)
        self.assertEqual(
            [m.role for m in neutral.messages],
            [pb.ROLE_USER] + [pb.ROLE_ASSISTANT, pb.ROLE_TOOL] * len(commands) + [pb.ROLE_ASSISTANT],
        )
        self.assertTrue(all(m.turn == 1 and m.token_count > 0 for m in neutral.messages))
        self.assertEqual(neutral.messages[-1].content, "There are 20 Rust files under src/.")
        self.assertEqual(neutral.messages[1].tool_calls[0].id, "call_0")
        self.assertEqual(neutral.messages[2].tool_call_id, "call_0")
        self.assertEqual(sum(m.token_count for m in neutral.messages), final.log_tokens)
        NOTES.append(
            f"agent loop: {message_count} messages, version {final.version}, "
            f"estimator samples {final.estimator.samples}, "
            f"mean error {final.estimator.mean_abs_error_pct:.2f} %"
        )


class Anthropic(Rpc):
    def test_anthropic_messages(self):
        session_id, _ = self.create("anthropic", context_window_tokens=16000, max_output_tokens=2000)
        self.append(session_id, user("What is in the repo?"), user("Also, which branch?"))
        self.append(
            session_id,
            assistant("Let me look.", [tool_call("toolu_a", "ls"), tool_call("toolu_b", "git branch")]),
            tool_result("toolu_a", "Cargo.toml\nsrc"),
            tool_result("toolu_b", "* main"),
            usage=pb.Usage(input_tokens=400, output_tokens=40),
        )
        self.append(session_id, user("Thanks. Summarize."))
        self.append(session_id, assistant("A Rust crate on branch main."))

        built = call(
            "BuildMessages",
            pb.BuildMessagesRequest(
                session_id=session_id,
                system_prompt=SYSTEM_PROMPT,
                tools=TOOLS,
                format=pb.OUTPUT_FORMAT_ANTHROPIC_MESSAGES,
            ),
        )
        body = json.loads(built.json)
        # The system prompt as a text block with the cache breakpoint after it.
        self.assertEqual(body["system"], [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}])
        self.assertEqual(body["max_tokens"], 2000)
        self.assertEqual(
            body["tools"],
            [{"name": "bash", "description": BASH_TOOL.description, "input_schema": BASH_SCHEMA}],
        )
        messages = body["messages"]
        roles = [m["role"] for m in messages]
        self.assertNotIn("system", roles)
        self.assertEqual(roles[0], "user")
        self.assertTrue(all(a != b for a, b in zip(roles, roles[1:])), f"roles alternate: {roles}")
        self.assertEqual(roles, ["user", "assistant", "user", "assistant"])
        # Two user messages merged into one turn.
        self.assertEqual(
            messages[0]["content"],
            [{"type": "text", "text": "What is in the repo?"}, {"type": "text", "text": "Also, which branch?"}],
        )
        self.assertEqual(
            messages[1]["content"],
            [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {"command": "git branch"}},
            ],
        )
        # Tool results go back as a user turn, followed by the user's next text.
        results = messages[2]["content"]
        self.assertEqual([b["type"] for b in results], ["tool_result", "tool_result", "text"])
        self.assertEqual([b.get("tool_use_id") for b in results[:2]], ["toolu_a", "toolu_b"])
        self.assertEqual(results[0]["content"], [{"type": "text", "text": "Cargo.toml\nsrc"}])
        self.assertEqual(results[2], {"type": "text", "text": "Thanks. Summarize."})
        # The newest turn carries the cache breakpoint.
        self.assertEqual(messages[3]["content"], [{"type": "text", "text": "A Rust crate on branch main.",
                                                   "cache_control": {"type": "ephemeral"}}])
        # Every tool_use has its tool_result in the next message.
        for index, message in enumerate(messages):
            uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
            if uses:
                answered = [b["tool_use_id"] for b in messages[index + 1]["content"] if b["type"] == "tool_result"]
                self.assertEqual(answered, uses)
        self.assertEqual(built.budget.status, pb.BUDGET_STATUS_OK)
        self.assertEqual((built.first_seq, built.last_seq), (1, 7))


class Compaction(Rpc):
    def test_summarizes_oldest_turns_to_fit(self):
        window, reserve = 2000, 500
        session_id, _ = self.create("trim", context_window_tokens=window, max_output_tokens=reserve)
        words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()

        def text(label, count):
            return label + ": " + " ".join(words[i % len(words)] + str(i) for i in range(count))

        turns = 12
        for turn in range(turns):
            call_id = f"call_t{turn}"
            self.append(session_id, user(text(f"question {turn}", 60)))
            self.append(session_id, assistant(calls=[tool_call(call_id, f"cat notes/{turn}.txt")]))
            self.append(session_id, tool_result(call_id, text(f"notes {turn}", 90)))
            self.append(session_id, assistant(text(f"answer {turn}", 30)))
        session = self.get(session_id)
        self.assertEqual(session.message_count, 4 * turns)
        self.assertGreater(session.log_tokens, 2 * window, "the log is well over the window")

        checked = call(
            "CheckBudget",
            pb.CheckBudgetRequest(session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS),
        ).budget
        self.assertEqual(checked.status, pb.BUDGET_STATUS_OVER)
        self.assertEqual(checked.recommended_action, pb.RECOMMENDED_ACTION_SUMMARIZE)
        self.assertLess(checked.breakdown.headroom_tokens, 0)

        for output_format in (pb.OUTPUT_FORMAT_NEUTRAL, pb.OUTPUT_FORMAT_OPENAI_CHAT):
            built = call(
                "BuildMessages",
                pb.BuildMessagesRequest(
                    session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS, format=output_format
                ),
            )
            breakdown = built.budget.breakdown
            self.assertLessEqual(breakdown.total_tokens + breakdown.output_reserve_tokens, window)
            self.assertEqual(breakdown.output_reserve_tokens, reserve)
            self.assertGreaterEqual(breakdown.headroom_tokens, 0)
            self.assertNotEqual(built.budget.status, pb.BUDGET_STATUS_OVER)
            # The oldest whole turns went into summaries that cover 1..first_seq-1 once.
            self.assertEqual(built.trimmed.turns, 0)
            self.assertEqual(built.trimmed.summaries, 0)
            self.assertEqual(built.trimmed.incomplete_step_messages, 0)
            self.assertGreater(len(built.summaries), 0)
            # Every message is in the request exactly once: inside one summary, or in the
            # history. Whole turns first; compacting deep also takes the older steps of
            # the newest turn (after its user message).
            # The summaries go in the system prompt, but a summary of the newest turn's
            # steps follows that turn's user message, with the others (AFTER_TASK).
            steps_summarized = any(s.first_seq > built.first_seq for s in built.summaries)
            if output_format == pb.OUTPUT_FORMAT_NEUTRAL:
                block = built.messages[1].content if steps_summarized else built.system_prompt
            else:
                chat = json.loads(built.json)["messages"]
                block = chat[2]["content"] if steps_summarized else chat[0]["content"]
            coverage = [0] * (4 * turns + 1)
            for summary in built.summaries:
                self.assertLess(summary.token_count, summary.source_tokens)
                self.assertIn(summary.content, block)
                for seq in range(summary.first_seq, summary.last_seq + 1):
                    coverage[seq] += 1
            if output_format == pb.OUTPUT_FORMAT_NEUTRAL:
                for message in built.messages:
                    coverage[message.seq] += 1
                self.assertEqual(coverage[1:], [1] * (4 * turns))
            self.assertEqual((built.first_seq - 1) % 4, 0, "whole turns summarized")
            self.assertLessEqual(built.first_seq, 4 * (turns - 1) + 1, "the newest turn's user message is kept")
            self.assertGreater(breakdown.summary_tokens, 0)
            self.assertEqual(built.last_seq, 4 * turns)
            if output_format == pb.OUTPUT_FORMAT_NEUTRAL:
                # Without the summaries' message (seq 0).
                messages = [m for m in built.messages if m.seq > 0]
                self.assertEqual(messages[0].role, pb.ROLE_USER)
                seqs = [m.seq for m in messages]
                self.assertEqual(seqs, sorted(seqs))
                self.assertEqual((seqs[0], seqs[-1]), (built.first_seq, built.last_seq))
                # The view's cost: old tool results past the clearing threshold are
                # placeholders now (view_token_count), the rest whole.
                self.assertEqual(sum(m.view_token_count for m in messages), breakdown.history_tokens)
                cleared = [m for m in messages if m.view_state == pb.VIEW_STATE_CLEARED]
                for message in cleared:
                    self.assertEqual(message.role, pb.ROLE_TOOL)
                    self.assertIn(f"Expand seq {message.seq}", message.content)
                    self.assertLess(message.view_token_count, message.token_count)
                open_calls = set()
                for message in messages:
                    if message.role == pb.ROLE_TOOL:
                        self.assertIn(message.tool_call_id, open_calls, "no orphaned tool result")
                        open_calls.remove(message.tool_call_id)
                    open_calls.update(c.id for c in message.tool_calls)
                self.assertEqual(open_calls, set(), "no unanswered tool call")
                neutral_view = (len(built.summaries), built.first_seq)
                neutral_count = len(built.messages)
            else:
                messages = json.loads(built.json)["messages"]
                self.assertEqual(messages[0], {"role": "system", "content": built.system_prompt})
                self.assertTrue(built.system_prompt.startswith(SYSTEM_PROMPT))
                self.assertEqual(messages[1]["role"], "user")
                self.assertEqual(len(messages), 1 + neutral_count)
                self.assertIsNone(openai_pairs_ok(messages))
                self.assertEqual((len(built.summaries), built.first_seq), neutral_view)
        NOTES.append(
            f"compaction: {turns} turns, {session.log_tokens} log tokens into window {window}: "
            f"{len(built.summaries)} summaries cover seqs 1-{built.first_seq - 1}, "
            f"prompt {breakdown.total_tokens} + reserve {reserve}"
        )


class Jobs(Rpc):
    def test_compact_waits_for_its_summarization_job(self):
        session_id, _ = self.create("jobs", context_window_tokens=4000, max_output_tokens=1000)
        filler = " ".join(f"word{i}" for i in range(120))
        for turn in range(10):
            call_id = f"call_j{turn}"
            self.append(session_id, user(f"step {turn}: {filler}"))
            self.append(session_id, assistant(calls=[tool_call(call_id, f"ls dir{turn}")]))
            self.append(session_id, tool_result(call_id, f"listing {turn}: {filler}"))
            self.append(session_id, assistant(f"done {turn}"))
        compacted = call(
            "Compact",
            pb.CompactRequest(session_id=session_id, mode=pb.COMPACT_MODE_SUMMARIZE, wait=True),
        )
        self.assertGreater(compacted.job_id, 0)
        self.assertEqual(compacted.job.state, pb.JOB_STATE_COMPLETED, compacted.job)
        self.assertLess(compacted.tokens_after, compacted.tokens_before)
        self.assertGreater(compacted.summarized_last_seq, 0)
        job = call("GetJob", pb.GetJobRequest(job_id=compacted.job_id))
        self.assertEqual(job.session_id, session_id)
        self.assertEqual(job.state, pb.JOB_STATE_COMPLETED)
        self.assertEqual(job.attempts, 1)
        result = json.loads(job.result_json)
        self.assertTrue(result["due"])
        self.assertEqual(result["summarized_last_seq"], compacted.summarized_last_seq)
        self.assertEqual(result["tokens_after"], compacted.tokens_after)
        built = call(
            "BuildMessages",
            pb.BuildMessagesRequest(session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS),
        )
        self.assertEqual(built.summaries[0].first_seq, 1)
        self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, "GetJob", pb.GetJobRequest(job_id=0))
        self.assertRpcError(grpc.StatusCode.NOT_FOUND, "GetJob", pb.GetJobRequest(job_id=2**62))
        NOTES.append(
            f"jobs: Compact SUMMARIZE waited for job {job.job_id}: "
            f"{compacted.tokens_before} -> {compacted.tokens_after} tokens"
        )


class Errors(Rpc):
    def test_unknown_session_is_not_found(self):
        missing = new_session_id("missing")
        for method, request in [
            ("GetSession", pb.GetSessionRequest(session_id=missing)),
            ("DeleteSession", pb.DeleteSessionRequest(session_id=missing)),
            ("AppendTurn", pb.AppendTurnRequest(session_id=missing, messages=[user("hi")])),
            ("BuildMessages", pb.BuildMessagesRequest(session_id=missing)),
            ("CheckBudget", pb.CheckBudgetRequest(session_id=missing)),
        ]:
            error = self.assertRpcError(grpc.StatusCode.NOT_FOUND, method, request)
            self.assertIn(missing, error.details(), method)

    def test_rejected_appends(self):
        session_id, _ = self.create("errors", context_window_tokens=8000, max_output_tokens=1000)
        first = self.append(session_id, user("Run the tests."))
        self.append(session_id, assistant(calls=[tool_call("call_known", "cargo test")]))
        before = self.get(session_id)
        self.assertEqual(before.version, first.version + 1)

        # A result for a call never made: INVALID_ARGUMENT naming the field, also as a
        # google.rpc.BadRequest detail.
        error = self.assertRpcError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "AppendTurn",
            pb.AppendTurnRequest(session_id=session_id, messages=[tool_result("call_unknown", "ok")]),
        )
        self.assertIn("messages[0].tool_call_id", error.details())
        status = rpc_status.from_call(error)
        self.assertIsNotNone(status, "grpc-status-details-bin is sent")
        self.assertEqual(status.code, grpc.StatusCode.INVALID_ARGUMENT.value[0])
        bad_request = error_details_pb2.BadRequest()
        self.assertTrue(any(d.Unpack(bad_request) for d in status.details), "a BadRequest detail")
        self.assertEqual([v.field for v in bad_request.field_violations], ["messages[0].tool_call_id"])
        self.assertIn("call_unknown", bad_request.field_violations[0].description)

        # A stale expected_version: ABORTED with the current version.
        error = self.assertRpcError(
            grpc.StatusCode.ABORTED,
            "AppendTurn",
            pb.AppendTurnRequest(
                session_id=session_id,
                messages=[tool_result("call_known", "ok")],
                expected_version=before.version - 1,
            ),
        )
        self.assertIn(str(before.version), error.details())
        status = rpc_status.from_call(error)
        self.assertIsNotNone(status)
        info = error_details_pb2.ErrorInfo()
        self.assertTrue(any(d.Unpack(info) for d in status.details), "an ErrorInfo detail")
        self.assertEqual(info.metadata["current_version"], str(before.version))

        # Neither rejected append changed the session.
        after = self.get(session_id)
        self.assertEqual(after.version, before.version)
        self.assertEqual(after.message_count, before.message_count)
        self.assertEqual(after.log_tokens, before.log_tokens)

        # The right expected_version goes through.
        ok = self.append(session_id, tool_result("call_known", "ok"), expected_version=before.version)
        self.assertEqual(ok.version, before.version + 1)
        self.assertEqual(list(ok.seqs), [before.message_count + 1])

        # A second result for the same call is rejected too.
        error = self.assertRpcError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "AppendTurn",
            pb.AppendTurnRequest(session_id=session_id, messages=[tool_result("call_known", "again")]),
        )
        self.assertIn("messages[0].tool_call_id", error.details())
        self.assertEqual(self.get(session_id).version, ok.version)

    def test_deepseek_tokenizer_counts_as_deepseek_does(self):
        """A session counting with DeepSeek's own tokenizer: its framing skips call ids."""
        history = {}
        for tokenizer in (pb.TOKENIZER_DEEPSEEK_V3, pb.TOKENIZER_O200K_BASE):
            for call_id in ("c1", "call_00_I97A8x52p7uzGuPltfmmxyg7"):
                session_id, session = self.create("tokenizer", tokenizer=tokenizer)
                self.assertEqual(self.get(session_id).policy.tokenizer, tokenizer)
                first = self.append(session_id, user("hello world"))
                if tokenizer == pb.TOKENIZER_DEEPSEEK_V3:
                    # 3 tokens of framing, "user" and "hello world" in DeepSeek-V3's vocabulary.
                    self.assertEqual(first.budget.breakdown.history_tokens, 3 + 1 + 2)
                command = 'cd /testbed && printf "a\\nb"'
                done = self.append(session_id, assistant(calls=[tool_call(call_id, command)]), tool_result(call_id, "a\nb"))
                history[(tokenizer, call_id)] = done.budget.breakdown.history_tokens
        # DeepSeek does not render call ids; OpenAI's framing counts them.
        self.assertEqual(
            history[(pb.TOKENIZER_DEEPSEEK_V3, "c1")],
            history[(pb.TOKENIZER_DEEPSEEK_V3, "call_00_I97A8x52p7uzGuPltfmmxyg7")],
        )
        self.assertLess(
            history[(pb.TOKENIZER_O200K_BASE, "c1")],
            history[(pb.TOKENIZER_O200K_BASE, "call_00_I97A8x52p7uzGuPltfmmxyg7")],
        )

    def test_duplicate_session_and_bad_policy(self):
        session_id, _ = self.create("dup")
        error = self.assertRpcError(
            grpc.StatusCode.ALREADY_EXISTS, "CreateSession", pb.CreateSessionRequest(session_id=session_id)
        )
        self.assertIn(session_id, error.details())
        error = self.assertRpcError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "CreateSession",
            pb.CreateSessionRequest(
                session_id=new_session_id("bad"),
                policy=pb.Policy(context_window_tokens=1000, max_output_tokens=1000),
            ),
        )
        self.assertIn("policy.max_output_tokens", error.details())
        deleted = call("DeleteSession", pb.DeleteSessionRequest(session_id=session_id))
        self.assertEqual(deleted.deleted_messages, 0)
        self.assertRpcError(grpc.StatusCode.NOT_FOUND, "GetSession", pb.GetSessionRequest(session_id=session_id))


class Idempotency(Rpc):
    def test_retry_with_same_key_replays(self):
        session_id, _ = self.create("idem")
        self.append(session_id, user("Start."))
        key = f"append-{uuid.uuid4().hex}"
        request = pb.AppendTurnRequest(
            session_id=session_id,
            messages=[assistant(calls=[tool_call("call_i", "date")]), tool_result("call_i", "Mon Jan 1")],
            idempotency_key=key,
            usage=pb.Usage(input_tokens=200, output_tokens=10),
        )
        first = call("AppendTurn", request)
        self.assertFalse(first.replayed)
        self.assertEqual(list(first.seqs), [2, 3])
        after_first = self.get(session_id)

        second = call("AppendTurn", request)
        self.assertTrue(second.replayed)
        self.assertEqual(list(second.seqs), list(first.seqs))
        self.assertEqual(second.version, first.version)
        after_second = self.get(session_id)
        self.assertEqual(after_second.message_count, after_first.message_count)
        self.assertEqual(after_second.message_count, 3)
        self.assertEqual(after_second.version, after_first.version)
        self.assertEqual(after_second.usage_total.input_tokens, 200, "usage counted once")

        # The same key with another payload is refused.
        changed = pb.AppendTurnRequest()
        changed.CopyFrom(request)
        changed.messages[1].content = "Tue Jan 2"
        error = self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, "AppendTurn", changed)
        self.assertIn("idempotency_key", error.details())
        self.assertEqual(self.get(session_id).message_count, 3)


class Reflection(unittest.TestCase):
    def test_reflection_lists_and_describes_the_service(self):
        database = ProtoReflectionDescriptorDatabase(SERVER["channel"])
        services = set(database.get_services())
        self.assertIn(SERVICE, services)
        self.assertIn("grpc.health.v1.Health", services)
        pool = descriptor_pool.DescriptorPool(database)
        file = pool.FindFileContainingSymbol(SERVICE)
        self.assertEqual(file.package, "ctxd.v1")
        service = pool.FindServiceByName(SERVICE)
        methods = {m.name: m for m in service.methods}
        self.assertTrue(RPCS <= set(methods), f"methods: {sorted(methods)}")
        self.assertEqual(methods["AppendTurn"].input_type.full_name, "ctxd.v1.AppendTurnRequest")
        self.assertEqual(methods["BuildMessages"].output_type.full_name, "ctxd.v1.BuildMessagesResponse")
        # The reflected schema matches the one the stubs were generated from.
        self.assertEqual(
            [f.name for f in pool.FindMessageTypeByName("ctxd.v1.Message").fields],
            [f.name for f in pb.Message.DESCRIPTOR.fields],
        )
        NOTES.append(f"reflection: {len(services)} services, {SERVICE} has {len(methods)} methods")


def main():
    started = time.monotonic()
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    # Errors in setUpModule / tearDownModule count as failures but were no test run.
    test_errors = [test for test, _ in result.errors if isinstance(test, unittest.TestCase)]
    passed = result.testsRun - len(result.failures) - len(test_errors) - len(result.skipped)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"\nctxd python client ({time.monotonic() - started:.1f} s):")
    for note in NOTES:
        print(f"  {note}")
    if not result.wasSuccessful() and "log_path" in SERVER:
        print(f"\nserver log tail:\n{log_tail()}")
    if "tmp" in SERVER:
        SERVER["tmp"].cleanup()
    print(f"python: {passed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
