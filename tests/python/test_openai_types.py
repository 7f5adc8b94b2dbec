"""ctxd's OpenAI bodies against the official `openai` SDK's types.

Through a real server (started as tests/python/test_client.py starts it), sessions with
tools, parallel tool calls, images, reasoning (with and without a reasoning item id) and
summaries (a small window) are built in OPENAI_CHAT and OPENAI_RESPONSES, and every body
is validated as the SDK's request parameters (`CompletionCreateParamsNonStreaming`,
`ResponseCreateParamsNonStreaming`), strictly: every TypedDict of the SDK's chat and
responses types refuses unknown keys, and every lazily validated iterable is drained, so
a wrong item type, a missing required key or a stray field fails. The response fixtures
of tests/data/native (and a recorded reply of the corpus) are parsed with the SDK's
response models (`ChatCompletion`, `Response`).

Run by tests/python/run (CTXD_BIN, CTXD_STUBS as for test_client.py). Prints a closing
"N passed, N failed" line.
"""

import copy
import gzip
import importlib
import json
import os
import pkgutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import openai.types.chat  # noqa: E402
import openai.types.responses  # noqa: E402
import openai.types.shared_params  # noqa: E402
import typing_extensions  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming  # noqa: E402
from openai.types.responses import Response  # noqa: E402
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming  # noqa: E402
from pydantic import TypeAdapter, ValidationError  # noqa: E402

import test_client as server  # noqa: E402
from test_client import SYSTEM_PROMPT, TOOLS, assistant, call, new_session_id, pb, tool_call, tool_result, user  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NATIVE = os.path.join(ROOT, "tests", "data", "native")
CORPUS = os.path.join(ROOT, "tests", "data", "swe-trajectories")


def strict_sdk_types():
    """Every TypedDict of the SDK's chat, responses and shared parameter types refuses
    keys it does not declare (pydantic reads `__pydantic_config__` on a TypedDict)."""
    for package in (openai.types.chat, openai.types.responses, openai.types.shared_params):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and typing_extensions.is_typeddict(value)
                    and value.__module__ == module.__name__
                ):
                    value.__pydantic_config__ = {"extra": "forbid"}


strict_sdk_types()
# Built once and kept: the SDK's `Iterable[...]` fields validate lazily, while iterated,
# through the adapter that made them.
CHAT_PARAMS = TypeAdapter(CompletionCreateParamsNonStreaming)
RESPONSES_PARAMS = TypeAdapter(ResponseCreateParamsNonStreaming)


def drain(value):
    """Iterates every lazily validated iterable, so its items are validated too."""
    if isinstance(value, dict):
        for item in value.values():
            drain(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            drain(item)
    elif hasattr(value, "__next__"):
        for item in value:
            drain(item)


def check_chat(body):
    """Validates a Chat Completions body (plus a model) as the SDK's request parameters.
    `reasoning_content` on assistant messages is the one field outside OpenAI's types:
    ctxd returns stored reasoning there for the DeepSeek-style APIs that take it."""
    body = copy.deepcopy(body)
    for message in body["messages"]:
        if message["role"] == "assistant":
            message.pop("reasoning_content", None)
    drain(CHAT_PARAMS.validate_python({"model": "gpt-4o", **body}))


def check_responses(body):
    drain(RESPONSES_PARAMS.validate_python({"model": "gpt-5", **body}))


def fixture(name):
    with open(os.path.join(NATIVE, name), encoding="utf-8") as file:
        return file.read()


def recorded_reply():
    """The first recorded reply of the corpus, a ChatCompletion as DeepSeek returned it."""
    name = sorted(f for f in os.listdir(CORPUS) if f.endswith(".traj.json.gz"))[0]
    with gzip.open(os.path.join(CORPUS, name), "rt", encoding="utf-8") as file:
        session = json.load(file)
    return next(m for m in session["messages"] if m["role"] == "assistant")["extra"]["response"]


def media(uri, mime_type):
    return pb.ContentPart(media=pb.MediaRef(uri=uri, mime_type=mime_type))


class OpenAiTypes(unittest.TestCase):
    def create(self, name, **policy):
        session_id = new_session_id(name)
        call("CreateSession", pb.CreateSessionRequest(session_id=session_id, policy=pb.Policy(**policy)))
        return session_id

    def append(self, session_id, *messages):
        call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=list(messages)))

    def native(self, session_id, output_format, response="", items=()):
        return call(
            "AppendNative",
            pb.AppendNativeRequest(
                session_id=session_id,
                format=output_format,
                response_json=response,
                items_json=json.dumps(list(items)) if items else "",
            ),
        )

    def bodies(self, session_id):
        """The session built in both OpenAI formats, each validated by the SDK's types."""
        built = {}
        for output_format in (pb.OUTPUT_FORMAT_OPENAI_CHAT, pb.OUTPUT_FORMAT_OPENAI_RESPONSES):
            response = call(
                "BuildMessages",
                pb.BuildMessagesRequest(
                    session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS, format=output_format
                ),
            )
            built[output_format] = (json.loads(response.json), response)
        chat, _ = built[pb.OUTPUT_FORMAT_OPENAI_CHAT]
        responses, _ = built[pb.OUTPUT_FORMAT_OPENAI_RESPONSES]
        check_chat(chat)
        check_responses(responses)
        return built

    def test_response_fixtures_parse_with_the_sdk_models(self):
        completion = ChatCompletion.model_validate_json(fixture("openai_chat_completion_tool_calls.json"))
        self.assertEqual(completion.choices[0].message.tool_calls[0].id, "call_abc123")
        recorded = ChatCompletion.model_validate(recorded_reply())
        self.assertEqual(recorded.usage.prompt_tokens_details.cached_tokens, 320)
        text = Response.model_validate_json(fixture("openai_response_text.json"))
        self.assertTrue(text.output_text.startswith("The image depicts"))
        calls = Response.model_validate_json(fixture("openai_response_function_calls.json"))
        self.assertEqual([item.type for item in calls.output], ["reasoning", "function_call", "function_call"])
        self.assertEqual(calls.usage.input_tokens_details.cached_tokens, 768)

    def test_tools_parallel_calls_images_and_reasoning_build_sdk_valid_bodies(self):
        session_id = self.create("openai-types", context_window_tokens=200_000, max_output_tokens=8_000)
        self.append(
            session_id,
            pb.Message(
                role=pb.ROLE_USER,
                content="What is in these?",
                parts=[media("data:image/png;base64,iVBORw0KGgo=", "image/png"), media("https://x.test/a.jpg", "image/jpeg")],
            ),
        )
        # A Chat reply with reasoning and two parallel calls, its results, a user image.
        chat_reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "deepseek-reasoner",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "reasoning_content": "Two files to read.",
                        "tool_calls": [
                            {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": '{"command":"ls"}'}},
                            {"id": "call_b", "type": "function", "function": {"name": "bash", "arguments": '{"command":"pwd"}'}},
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        }
        ChatCompletion.model_validate(chat_reply)
        self.native(
            session_id,
            pb.OUTPUT_FORMAT_OPENAI_CHAT,
            json.dumps(chat_reply),
            [
                {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
                {"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "/work"}]},
                {"role": "user", "content": [{"type": "text", "text": "And this one?"}, {"type": "image_url", "image_url": {"url": "https://x.test/b.png"}}]},
            ],
        )
        # A Responses reply with a reasoning item and two parallel calls.
        self.native(
            session_id,
            pb.OUTPUT_FORMAT_OPENAI_RESPONSES,
            fixture("openai_response_function_calls.json"),
            [
                {"type": "function_call_output", "call_id": "call_12345xyz", "output": "14°C"},
                {
                    "type": "function_call_output",
                    "call_id": "call_67890abc",
                    "output": [{"type": "input_image", "image_url": "https://x.test/map.png", "detail": "auto"}],
                },
            ],
        )
        # Reasoning without a reasoning item id (appended neutrally), then a text reply.
        self.append(
            session_id,
            pb.Message(role=pb.ROLE_ASSISTANT, content="Noted.", reasoning="Nothing to add."),
            user("Summarize."),
        )
        self.native(session_id, pb.OUTPUT_FORMAT_OPENAI_RESPONSES, fixture("openai_response_text.json"))

        built = self.bodies(session_id)
        chat, _ = built[pb.OUTPUT_FORMAT_OPENAI_CHAT]
        responses, _ = built[pb.OUTPUT_FORMAT_OPENAI_RESPONSES]
        roles = [m["role"] for m in chat["messages"]]
        self.assertEqual(roles.count("tool"), 4)
        self.assertEqual(chat["messages"][1]["content"][1]["type"], "image_url")
        items = responses["input"]
        kinds = [item["type"] for item in items]
        self.assertEqual(kinds.count("function_call"), 4)
        self.assertEqual(kinds.count("function_call_output"), 4)
        reasoning = [item for item in items if item["type"] == "reasoning"]
        self.assertEqual(len(reasoning), 1, "reasoning is sent only with its item id")
        self.assertTrue(reasoning[0]["encrypted_content"].startswith("gAAAA"))
        self.assertNotIn("Nothing to add.", json.dumps(responses))
        self.assertEqual(responses["instructions"], SYSTEM_PROMPT)
        self.assertEqual(items[0]["content"][1], {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"})

    def test_summarized_sessions_build_sdk_valid_bodies(self):
        window, reserve = 2000, 500
        session_id = self.create("openai-small", context_window_tokens=window, max_output_tokens=reserve)
        words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()

        def text(label, count):
            return label + ": " + " ".join(words[i % len(words)] + str(i) for i in range(count))

        def reply(turn):
            return {
                "object": "response",
                "status": "completed",
                "output": [
                    {"type": "reasoning", "id": f"rs_{turn}", "summary": [{"type": "summary_text", "text": text("plan", 10)}]},
                    {"type": "function_call", "call_id": f"call_{turn}_0", "name": "bash", "arguments": '{"command":"ls"}'},
                    {"type": "function_call", "call_id": f"call_{turn}_1", "name": "bash", "arguments": '{"command":"pwd"}'},
                ],
            }

        def outputs(turn):
            return [{"type": "function_call_output", "call_id": f"call_{turn}_{i}", "output": text(f"notes {turn}", 45)} for i in range(2)]

        for turn in range(10):
            self.append(session_id, user(text(f"question {turn}", 60)))
            self.native(session_id, pb.OUTPUT_FORMAT_OPENAI_RESPONSES, json.dumps(reply(turn)), outputs(turn))
            self.append(session_id, pb.Message(role=pb.ROLE_ASSISTANT, content=text(f"answer {turn}", 20)))
        # The last turn is still working: its reply with reasoning and calls stays in view.
        self.append(session_id, user("One more."))
        self.native(session_id, pb.OUTPUT_FORMAT_OPENAI_RESPONSES, json.dumps(reply(10)), outputs(10))
        built = self.bodies(session_id)
        for output_format, (body, response) in built.items():
            self.assertGreater(len(response.summaries), 0, "the small window summarized")
            breakdown = response.budget.breakdown
            self.assertLessEqual(breakdown.total_tokens + breakdown.output_reserve_tokens, window)
            chat_format = output_format == pb.OUTPUT_FORMAT_OPENAI_CHAT
            system = body["messages"][0]["content"] if chat_format else body["instructions"]
            self.assertIn(response.summaries[0].content, system)
        responses, _ = built[pb.OUTPUT_FORMAT_OPENAI_RESPONSES]
        last = [item for item in responses["input"] if item.get("id") == "rs_10"]
        self.assertEqual(last[0]["summary"], [{"type": "summary_text", "text": text("plan", 10)}])
        called = set()
        for item in responses["input"]:
            if item["type"] == "function_call":
                called.add(item["call_id"])
            if item["type"] == "function_call_output":
                self.assertIn(item["call_id"], called, "every output follows its call")

    def test_recall_tools_build_sdk_valid_bodies(self):
        """With recall_tools, ctxd's two tools follow the client's, valid in both formats,
        and so is a recall answer in the history."""
        session_id = self.create("recall", recall_tools=True)
        self.append(session_id, user("What failed?"), assistant(calls=[tool_call("r1", "pytest")]),
                    tool_result("r1", "1 failed: test_slug"))
        # The model calls ctxd's search tool; ctxd answers it.
        self.append(session_id, pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[pb.ToolCall(
            id="r2", name="ctxd_recall_search", arguments_json='{"query": "failed"}')]))
        call("AnswerRecall", pb.AnswerRecallRequest(session_id=session_id, tool_call_id="r2"))
        built = self.bodies(session_id)
        chat, _ = built[pb.OUTPUT_FORMAT_OPENAI_CHAT]
        responses, _ = built[pb.OUTPUT_FORMAT_OPENAI_RESPONSES]
        self.assertEqual([t["function"]["name"] for t in chat["tools"]][-2:],
                         ["ctxd_recall_search", "ctxd_recall_expand"])
        self.assertEqual([t["name"] for t in responses["tools"]][-2:],
                         ["ctxd_recall_search", "ctxd_recall_expand"])

    def test_the_checks_refuse_broken_bodies(self):
        session_id = self.create("openai-broken", context_window_tokens=200_000, max_output_tokens=8_000)
        self.append(
            session_id,
            user("Go."),
            pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[tool_call("call_1", "ls")]),
            tool_result("call_1", "a.txt"),
            pb.Message(role=pb.ROLE_USER, parts=[media("https://x.test/a.png", "image/png")]),
        )
        built = self.bodies(session_id)
        chat, _ = built[pb.OUTPUT_FORMAT_OPENAI_CHAT]
        responses, _ = built[pb.OUTPUT_FORMAT_OPENAI_RESPONSES]

        def broken_responses(edit):
            body = copy.deepcopy(responses)
            edit(body["input"])
            return body

        def broken_chat(edit):
            body = copy.deepcopy(chat)
            edit(body["messages"])
            return body

        breakages = [
            (check_responses, broken_responses(lambda i: i[2].update(type="function_result"))),
            (check_responses, broken_responses(lambda i: i[1].update(tool_call_id="call_1"))),
            (check_responses, broken_responses(lambda i: i[3]["content"][0].pop("detail"))),
            (check_responses, broken_responses(lambda i: i[0].update(content=[{"type": "output_text", "text": "Go."}]))),
            (check_responses, {**copy.deepcopy(responses), "tools": [{"type": "function", "name": "bash"}]}),
            (check_chat, broken_chat(lambda m: m[3].pop("tool_call_id"))),
            (check_chat, broken_chat(lambda m: m[2]["tool_calls"][0].update(type="functions"))),
            (check_chat, broken_chat(lambda m: m[4]["content"][0].update(type="input_image"))),
        ]
        for index, (check, body) in enumerate(breakages):
            with self.subTest(breakage=index), self.assertRaises(ValidationError):
                check(body)


setUpModule = server.setUpModule
tearDownModule = server.tearDownModule


def main():
    started = time.monotonic()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(OpenAiTypes)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    # Errors in setUpModule / tearDownModule count as failures but were no test run.
    test_errors = [test for test, _ in result.errors if isinstance(test, unittest.TestCase)]
    passed = result.testsRun - len(result.failures) - len(test_errors) - len(result.skipped)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"\nctxd OpenAI types ({time.monotonic() - started:.1f} s)")
    if not result.wasSuccessful() and "log_path" in server.SERVER:
        print(f"\nserver log tail:\n{server.log_tail()}")
    if "tmp" in server.SERVER:
        server.SERVER["tmp"].cleanup()
    print(f"openai-types: {passed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
