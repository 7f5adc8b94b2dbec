"""An agent loop written only with the ctxd SDK and each provider's official SDK,
against a real `ctxd serve` and a fake provider on loopback (tests/python/fake_provider.py)
that replays a real recorded session (the corpus' django__django-11099: its assistant
messages as the model's replies, its tool outputs as the tools').

For each format, OpenAI Chat Completions first, then Responses, Anthropic and Gemini:
build(format) -> the provider SDK's call -> append_response(the SDK's reply) ->
append_tool_results(the recorded outputs) -> ... to the end of the session, in a window
far smaller than the session so that ctxd compacts along the way. The fake checks every
request against the provider's rules (no orphan tool call or result, the latest result
last, within the window by ctxd's budget report and by its size), and the test fails on
any breach. Midway through the OpenAI Chat loop the server is restarted; the session's
events iterator carries on with no event lost or repeated.
"""

import ast
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anthropic  # noqa: E402
import openai  # noqa: E402
from google import genai  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

import ctxd  # noqa: E402
from ctxd import pb  # noqa: E402
from fake_provider import FakeProvider, Step  # noqa: E402
from sdk_harness import Collector, Server  # noqa: E402

SESSION_FILE = "django__django-11099.traj.json.gz"
WINDOW = 6000
MAX_OUTPUT = 800
BASH_TOOL = {
    "name": "bash",
    "description": "Execute a bash command",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The bash command to execute"}},
        "required": ["command"],
    },
}
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = {}
NOTES = []


def corpus_path():
    return os.path.join(REPO, "tests", "data", "swe-trajectories", SESSION_FILE)


def load_session():
    """(system prompt, task, steps) of the recorded session."""
    with gzip.open(corpus_path(), "rt", encoding="utf-8") as file:
        messages = json.load(file)["messages"]
    system, task = messages[0]["content"], messages[1]["content"]
    steps = []
    for message in messages[2:]:
        if message["role"] == "assistant":
            raw = message.get("tool_calls")
            calls = ast.literal_eval(raw) if isinstance(raw, str) and raw != "None" else (raw or [])
            steps.append(
                Step(
                    content=message.get("content") or "",
                    calls=[(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls],
                    completion_tokens=message["extra"]["response"]["usage"]["completion_tokens"],
                )
            )
        elif message["role"] == "tool":
            name = next(n for cid, n, _ in steps[-1].calls if cid == message["tool_call_id"])
            steps[-1].results.append((message["tool_call_id"], name, message["content"]))
    return system, task, steps


def setUpModule():
    SERVER["server"] = Server()
    SERVER["server"].start()
    system, task, steps = load_session()
    SERVER["recorded"] = (system, task, steps)
    # The text of the whole session is about three windows: a body of more than a
    # window's worth of characters (by the session's own characters per provider token,
    # with room for the JSON) means ctxd sent more than fits.
    text = len(system) + len(task) + sum(len(s.content) + sum(len(r[2]) for r in s.results) for s in steps)
    SERVER["chars_per_token"] = text / 19394  # the provider's count of the session's last prompt
    SERVER["provider"] = FakeProvider(steps, WINDOW, int(WINDOW * SERVER["chars_per_token"] * 1.6))


def tearDownModule():
    if "provider" in SERVER:
        SERVER["provider"].close()
    if "server" in SERVER:
        SERVER["server"].close()


def headers(session):
    breakdown = session.last_build.budget.breakdown
    return {
        "x-ctxd-total-tokens": str(breakdown.total_tokens),
        "x-ctxd-output-reserve-tokens": str(breakdown.output_reserve_tokens),
    }


def call_openai_chat(provider_url, session):
    client = openai.OpenAI(base_url=f"{provider_url}/v1", api_key="test", max_retries=0)

    def call(body):
        return client.chat.completions.create(model="deepseek-chat", extra_headers=headers(session), **body)

    return call


def call_openai_responses(provider_url, session):
    client = openai.OpenAI(base_url=f"{provider_url}/v1", api_key="test", max_retries=0)

    def call(body):
        return client.responses.create(model="deepseek-chat", extra_headers=headers(session), **body)

    return call


def call_anthropic(provider_url, session):
    client = anthropic.Anthropic(base_url=provider_url, api_key="test", max_retries=0)

    def call(body):
        return client.messages.create(model="claude-test", extra_headers=headers(session), **body)

    return call


def call_gemini(provider_url, session):
    client = genai.Client(
        api_key="test", http_options=genai_types.HttpOptions(base_url=provider_url, api_version="v1beta")
    )

    def call(body):
        config = genai_types.GenerateContentConfig(
            system_instruction=body.get("systemInstruction"),
            tools=body.get("tools"),
            http_options=genai_types.HttpOptions(headers=headers(session)),
        )
        return client.models.generate_content(model="gemini-test", contents=body["contents"], config=config)

    return call


class AgentLoop(unittest.TestCase):
    def run_loop(self, fmt, kind, make_call, restart_midway=False):
        system, task, steps = SERVER["recorded"]
        provider = SERVER["provider"]
        provider.expect(kind)
        server = SERVER["server"]
        client = ctxd.Client(server.addr)
        self.addCleanup(client.close)
        session = client.create_session(
            policy={
                "context_window_tokens": WINDOW,
                "max_output_tokens": MAX_OUTPUT,
                "tokenizer": pb.TOKENIZER_DEEPSEEK_V3,
            },
            system_prompt=system,
            tools=[BASH_TOOL],
        )
        events = Collector(session.events(heartbeat_interval_ms=200))
        session.append(ctxd.user(task))
        call = make_call(provider.url, session)
        replayed_steps = 0
        for index, step in enumerate(steps):
            if restart_midway and index == len(steps) // 2:
                server.stop()
                server.start()
            body = session.build(fmt)
            self.assertLessEqual(
                session.last_build.budget.breakdown.total_tokens + MAX_OUTPUT, WINDOW, "ctxd's own report"
            )
            try:
                reply = call(body)
            except Exception as error:
                self.fail(f"step {index}: the provider refused the request: {error}\n{provider.violations}")
            appended = session.append_response(reply, fmt)
            self.assertEqual(len(appended.seqs), 1)
            if step.results:
                results = [ctxd.ToolResult(call_id, output, name) for call_id, name, output in step.results]
                appended = session.append_tool_results(results, fmt)
                self.assertEqual(len(appended.seqs), len(step.results))
            replayed_steps += 1
        self.assertEqual(provider.violations, [])
        self.assertEqual(provider.index, len(steps), "every recorded reply was asked for")
        info = session.get()
        messages = 1 + sum(1 + len(s.results) for s in steps)
        self.assertEqual(info.message_count, messages)
        # Nothing is lost: the log holds every recorded message byte for byte.
        log = session.expand(first_seq=1, last_seq=messages).messages
        self.assertEqual(log[0].content, task)
        outputs = [m.content for m in log if m.role == pb.ROLE_TOOL]
        self.assertEqual(outputs, [r[2] for s in steps for r in s.results])
        calls = [c.id for m in log for c in m.tool_calls]
        self.assertEqual(calls, [c[0] for s in steps for c in s.calls])
        # The session went through compaction to fit.
        compaction = info.compaction
        self.assertGreater(compaction.cleared_messages + compaction.summaries_written, 0, compaction)
        self.assertGreater(session.last_build.trimmed.messages + len(session.last_build.summaries), 0)
        # Every event of the session arrived once, in order, restart or not.
        self.assertEqual(session.delete(), messages)
        received = events.until(
            lambda got: got and got[-1].kind == pb.EVENT_KIND_SESSION_DELETED, "the SESSION_DELETED event"
        )
        events.thread.join(timeout=30)
        self.assertFalse(events.thread.is_alive(), "the iterator ends after SESSION_DELETED")
        seqs = [e.session_seq for e in received]
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)), "no event lost or repeated")
        kinds = {pb.EventKind.Name(e.kind) for e in received}
        self.assertTrue(
            kinds & {"EVENT_KIND_COMPACTION_COMPLETED", "EVENT_KIND_TOOL_RESULTS_CLEARED"}, sorted(kinds)
        )
        NOTES.append(
            f"{kind}: {replayed_steps} steps, {provider.requests} provider requests, largest body "
            f"{provider.largest_body_chars} chars (limit {provider.max_body_chars}), cleared "
            f"{compaction.cleared_messages}, summaries {compaction.summaries_written}, {len(received)} events"
            + (", server restarted midway" if restart_midway else "")
        )

    def test_1_openai_chat(self):
        self.run_loop(ctxd.Format.OPENAI_CHAT, "chat", call_openai_chat, restart_midway=True)

    def test_2_openai_responses(self):
        self.run_loop(ctxd.Format.OPENAI_RESPONSES, "responses", call_openai_responses)

    def test_3_anthropic(self):
        self.run_loop(ctxd.Format.ANTHROPIC_MESSAGES, "anthropic", call_anthropic)

    def test_4_gemini(self):
        self.run_loop(ctxd.Format.GEMINI, "gemini", call_gemini)

    def test_5_the_readme_loops(self):
        """The agent loops of README.md and clients/python/README.md (each file's first
        Python block that calls a provider), run as written (ctxd's address and the provider's base URL swapped
        in) against the fake: one tool call, one answer."""
        for readme in (os.path.join(REPO, "README.md"), os.path.join(REPO, "clients", "python", "README.md")):
            with self.subTest(readme=readme):
                self.run_readme_loop(readme)

    def test_6_the_readme_first_call(self):
        """README.md's first call, run as written (ctxd's address swapped in): no provider,
        no key; it prints the Anthropic body's messages and the budget."""
        with open(os.path.join(REPO, "README.md"), encoding="utf-8") as file:
            code = re.findall(r"```python\n(.*?)```", file.read(), re.S)[0]
        self.assertNotIn("openai", code)
        self.assertIn('"127.0.0.1:50051"', code)
        code = code.replace('"127.0.0.1:50051"', repr(SERVER["server"].addr))
        env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
        with tempfile.TemporaryDirectory() as cwd:
            done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Which files are here?", done.stdout)
        self.assertIn("README.md and src/.", done.stdout)
        self.assertIn("context_window_tokens: 8000", done.stdout)

    def run_readme_loop(self, readme):
        with open(readme, encoding="utf-8") as file:
            blocks = re.findall(r"```python\n(.*?)```", file.read(), re.S)
        code = next(block for block in blocks if "openai.OpenAI()" in block)
        self.assertIn('"127.0.0.1:50051"', code)
        code = code.replace('"127.0.0.1:50051"', repr(SERVER["server"].addr))
        provider = SERVER["provider"]
        steps = [
            Step("", [("call_r1", "bash", '{"command": "echo readme-loop"}')], 5, [("call_r1", "bash", "")]),
            Step("The test passes now.", [], 7),
        ]
        provider.expect("chat", steps=steps, require_report=False)
        env = dict(os.environ, OPENAI_BASE_URL=f"{provider.url}/v1", OPENAI_API_KEY="test")
        with tempfile.TemporaryDirectory() as cwd:
            done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(provider.violations, [])
        self.assertEqual(provider.index, 2)
        last = provider.bodies[-1]["messages"][-1]
        self.assertEqual(last, {"role": "tool", "tool_call_id": "call_r1", "content": "readme-loop\n"})
        self.assertEqual(provider.bodies[-1]["tools"][0]["function"]["name"], "bash")


def main():
    started = time.monotonic()
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    test_errors = [test for test, _ in result.errors if isinstance(test, unittest.TestCase)]
    passed = result.testsRun - len(result.failures) - len(test_errors) - len(result.skipped)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"\nctxd python agent loop ({time.monotonic() - started:.1f} s):")
    for note in NOTES:
        print(f"  {note}")
    if not result.wasSuccessful() and "server" in SERVER:
        print(f"\nserver log tail:\n{SERVER['server'].log_tail()}")
    print(f"python-agent-loop: {passed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
