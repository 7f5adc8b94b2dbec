"""ctxd's ANTHROPIC_MESSAGES and GEMINI bodies against the providers' official SDK types,
and AppendNative reading those providers' own response bodies and request items.

Run by tests/python/run (CTXD_BIN, CTXD_STUBS as for test_client.py). Each session is
built through the real server: tools, parallel tool calls, images, reasoning (signed and
not), replies and tool results appended in the providers' shapes from
tests/data/native/, and compaction in a small window. Every body is checked against:

- anthropic: a pydantic TypeAdapter over MessageCreateParamsNonStreaming (the SDK's
  request TypedDict). Pydantic validates the SDK's Iterable fields lazily and drops
  keys a TypedDict does not name, so the check consumes every iterable and requires the
  validated value to equal the body: a wrong block type or an unknown key fails.
- google-genai: the REST body's camelCase objects through the SDK's models
  (types.Content per content and for systemInstruction, types.Tool per tool,
  types.GenerationConfig), which forbid unknown fields; validated from JSON (so
  thoughtSignature must be base64) and dumped back by alias, equal to the body.

The response fixtures are parsed with anthropic.types.Message and
google.genai.types.GenerateContentResponse before they are appended.
"""

import base64
import json
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

import anthropic  # noqa: E402
import grpc  # noqa: E402
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming  # noqa: E402
from google.genai import types as genai  # noqa: E402
from google.rpc import error_details_pb2  # noqa: E402
from grpc_status import rpc_status  # noqa: E402
from pydantic import TypeAdapter, ValidationError  # noqa: E402

import test_client as base  # noqa: E402
from test_client import SYSTEM_PROMPT, TOOLS, assistant, call, pb, tool_call, tool_result, user  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "native"
ANTHROPIC_REQUEST = TypeAdapter(MessageCreateParamsNonStreaming)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
NOTES = base.NOTES


def fixture(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def materialize(value):
    """Consumes the validator's lazy iterables (which is when pydantic checks them)."""
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return [materialize(item) for item in value]


def check_anthropic(body):
    """Raises unless the body is a valid Messages request (with a model added)."""
    request = dict(body, model="claude-sonnet-4-5")
    validated = materialize(ANTHROPIC_REQUEST.validate_python(request))
    if validated != request:
        raise AssertionError(f"the SDK's types drop or change part of the body:\n{validated}\n!=\n{request}")


def check_gemini(body):
    """Raises unless every part of the REST body is what the SDK's models take."""
    unknown = set(body) - {"systemInstruction", "contents", "tools", "generationConfig"}
    if unknown:
        raise AssertionError(f"unknown body fields {sorted(unknown)}")

    def same(model, value):
        parsed = model.model_validate_json(json.dumps(value))
        dumped = parsed.model_dump(mode="json", by_alias=True, exclude_none=True)
        # The SDK writes bytes back in URL-safe base64; compare the bytes.
        dumped, value = signature_bytes(dumped), signature_bytes(value)
        if model is genai.Tool:
            # The SDK spells the schema's OpenAPI types in capitals; the REST API (and its
            # reference's examples) take JSON Schema's lower case too.
            value = upper_types(value)
        if dumped != value:
            raise AssertionError(f"{model.__name__} reads the body differently:\n{dumped}\n!=\n{value}")

    for content in body["contents"]:
        same(genai.Content, content)
    if "systemInstruction" in body:
        same(genai.Content, body["systemInstruction"])
    for tool in body.get("tools", []):
        same(genai.Tool, tool)
    same(genai.GenerationConfig, body["generationConfig"])


def signature_bytes(value):
    if isinstance(value, dict):
        return {key: base64.b64decode(item.replace("-", "+").replace("_", "/"), validate=True)
                if key == "thoughtSignature" else signature_bytes(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [signature_bytes(item) for item in value]
    return value


def upper_types(value):
    if isinstance(value, dict):
        return {key: item.upper() if key == "type" and isinstance(item, str) else upper_types(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [upper_types(item) for item in value]
    return value


def gemini_pairs_ok(contents):
    """Every functionResponse answers a functionCall of the model content before it,
    and every call is answered by the next content."""
    open_calls = set()
    for index, content in enumerate(contents):
        if content["role"] not in ("user", "model"):
            return f"contents[{index}] has role {content['role']!r}"
        if index and content["role"] == contents[index - 1]["role"]:
            return f"contents[{index}] repeats role {content['role']}"
        answers = {p["functionResponse"]["id"] for p in content["parts"] if "functionResponse" in p}
        if answers != open_calls:
            return f"contents[{index}] answers {sorted(answers)}, open calls {sorted(open_calls)}"
        open_calls = {p["functionCall"]["id"] for p in content["parts"] if "functionCall" in p}
    return f"calls {sorted(open_calls)} unanswered" if open_calls else None


class AnthropicGemini(base.Rpc):
    def build(self, session_id, output_format):
        built = call(
            "BuildMessages",
            pb.BuildMessagesRequest(session_id=session_id, system_prompt=SYSTEM_PROMPT, tools=TOOLS, format=output_format),
        )
        return built, json.loads(built.json)

    def native(self, session_id, output_format, response="", items=""):
        return call(
            "AppendNative",
            pb.AppendNativeRequest(session_id=session_id, format=output_format, response_json=response, items_json=items),
        )

    def test_fixtures_are_what_the_sdks_read(self):
        message = anthropic.types.Message.model_validate_json(fixture("anthropic_message_tool_use.json"))
        self.assertEqual([block.type for block in message.content],
                         ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"])
        response = genai.GenerateContentResponse.model_validate_json(fixture("gemini_response_function_calls.json"))
        self.assertEqual(len(response.function_calls), 2)
        for content in json.loads(fixture("gemini_items_function_responses.json")):
            genai.Content.model_validate_json(json.dumps(content))
        check_anthropic({"max_tokens": 10, "messages": json.loads(fixture("anthropic_items_tool_results.json"))})

    def test_broken_bodies_fail_the_checks(self):
        """The checks are strict: a wrong block type or part field fails them."""
        body = {"max_tokens": 10, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]},
        ]}
        check_anthropic(body)
        for broken in ({"type": "tool_call", "id": "t", "name": "bash", "input": {}},
                       {"type": "tool_use", "id": "t", "name": "bash", "input": {}, "arguments": "{}"},
                       {"type": "thinking", "thinking": "no signature"}):
            body["messages"][1]["content"] = [broken]
            with self.assertRaises((ValidationError, AssertionError), msg=str(broken)):
                check_anthropic(body)
        gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 5}}
        check_gemini(gemini)
        for broken in ({"functionInvocation": {"name": "f"}}, {"text": "x", "thoughtSignature": "not base64!"},
                       {"functionCall": {"name": "f", "arguments": "{}"}}):
            gemini["contents"][0]["parts"] = [broken]
            with self.assertRaises((ValidationError, AssertionError), msg=str(broken)):
                check_gemini(gemini)

    def test_native_replies_tools_images_and_reasoning_in_both_formats(self):
        session_id, _ = self.create("native", context_window_tokens=200_000, max_output_tokens=4_000)
        first = pb.Message(role=pb.ROLE_USER, content="What is in this repository? Screenshot attached.", parts=[
            pb.ContentPart(media=pb.MediaRef(uri=f"data:image/png;base64,{PNG}", mime_type="image/png")),
            pb.ContentPart(media=pb.MediaRef(uri="https://example.com/screen.jpg", mime_type="image/jpeg")),
        ])
        call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=[first]))
        # An Anthropic reply (signed thinking, parallel calls) and its results.
        appended = self.native(session_id, pb.OUTPUT_FORMAT_ANTHROPIC_MESSAGES,
                               fixture("anthropic_message_tool_use.json"), fixture("anthropic_items_tool_results.json"))
        # The reply; two tool results; the user's text and image.
        self.assertEqual(len(appended.seqs), 4)
        # A Gemini reply (calls without ids) and its results (also without ids).
        self.native(session_id, pb.OUTPUT_FORMAT_GEMINI,
                    fixture("gemini_response_function_calls.json"), fixture("gemini_items_function_responses.json"))
        # Reasoning from elsewhere, without a signature.
        plain = assistant("All done.")
        plain.reasoning = "Unsigned reasoning."
        call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=[plain, user("Thanks.")]))
        usage = self.get(session_id).usage_total
        self.assertEqual((usage.input_tokens, usage.cached_input_tokens, usage.output_tokens),
                         (412 + 1024 + 2048 + 3210, 2048 + 2048, 187 + 58 + 120))

        _, body = self.build(session_id, pb.OUTPUT_FORMAT_ANTHROPIC_MESSAGES)
        check_anthropic(body)
        reply = body["messages"][1]["content"]
        self.assertEqual([block["type"] for block in reply],
                         ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"])
        self.assertEqual(reply[0]["signature"], "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds")
        results = body["messages"][2]["content"]
        self.assertEqual(results[1]["is_error"], True)
        self.assertNotIn("Unsigned reasoning.", json.dumps(body))

        _, body = self.build(session_id, pb.OUTPUT_FORMAT_GEMINI)
        check_gemini(body)
        self.assertIsNone(gemini_pairs_ok(body["contents"]))
        model = [c for c in body["contents"] if c["role"] == "model"]
        calls = [p for p in model[1]["parts"] if "functionCall" in p]
        self.assertEqual([p["functionCall"]["id"] for p in calls],
                         ["gemini-Zx9kaPqQJ5qZ1MkP4ZuG-Ac-2", "gemini-Zx9kaPqQJ5qZ1MkP4ZuG-Ac-3"])
        self.assertEqual(calls[0]["thoughtSignature"], "CiQB0e2Kb3dRh+BYdbZvmulSN2Pwwh75GCNPk6adJQ==")
        self.assertEqual(body["contents"][0]["parts"][1]["inlineData"], {"mimeType": "image/png", "data": PNG})
        NOTES.append(f"native: anthropic and gemini bodies of {len(body['contents'])} contents pass the SDK types")

        # A result without an id and no call to answer: refused, naming the JSON path.
        with self.assertRaises(grpc.RpcError) as raised:
            self.native(session_id, pb.OUTPUT_FORMAT_GEMINI, items=json.dumps(
                [{"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"output": "x"}}}]}]))
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        fields = []
        for detail in rpc_status.from_call(raised.exception).details:
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(bad):
                fields += [violation.field for violation in bad.field_violations]
        self.assertEqual(fields, ["items_json: $[0].parts[0].functionResponse.id"])

    def test_recall_tools_are_valid_in_both_formats(self):
        """With recall_tools, ctxd's two tools follow the client's in the Anthropic and
        Gemini bodies, as the SDKs read them."""
        session_id, _ = self.create("recall", recall_tools=True)
        call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=[user("What failed?")]))
        for output_format, check, names in (
            (pb.OUTPUT_FORMAT_ANTHROPIC_MESSAGES, check_anthropic, lambda body: [t["name"] for t in body["tools"]]),
            (pb.OUTPUT_FORMAT_GEMINI, check_gemini,
             lambda body: [d["name"] for t in body["tools"] for d in t["functionDeclarations"]]),
        ):
            _, body = self.build(session_id, output_format)
            check(body)
            self.assertEqual(names(body)[-2:], ["ctxd_recall_search", "ctxd_recall_expand"])

    def test_compacted_sessions_stay_valid_in_both_formats(self):
        window, reserve = 2000, 500
        session_id, _ = self.create("native-small", context_window_tokens=window, max_output_tokens=reserve)
        words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()

        def text(label, count):
            return label + ": " + " ".join(words[i % len(words)] + str(i) for i in range(count))

        for turn in range(10):
            ids = [f"call_{turn}_a", f"call_{turn}_b"]
            thinking = assistant(calls=[tool_call(ids[0], "ls"), tool_call(ids[1], "pwd")])
            thinking.reasoning = text(f"reasoning {turn}", 10)
            if turn % 2:
                thinking.metadata["ctxd.anthropic.thinking_signature"] = f"c2lnbmF0dXJl{turn}"
            messages = [user(text(f"question {turn}", 50)), thinking,
                        tool_result(ids[0], text(f"files {turn}", 80)), tool_result(ids[1], "/work"),
                        assistant(text(f"answer {turn}", 20))]
            call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=messages))
        # The newest turn: a signed thinking step with parallel calls, kept whole.
        last = assistant("Checking both.", calls=[tool_call("last_a", "ls"), tool_call("last_b", "pwd")])
        last.reasoning = "Both at once."
        last.metadata["ctxd.anthropic.thinking_signature"] = "c2lnbmF0dXJlTGFzdA=="
        call("AppendTurn", pb.AppendTurnRequest(session_id=session_id, messages=[
            user("Where are we?"), last, tool_result("last_a", "src"), tool_result("last_b", "/work")]))
        for output_format, check in ((pb.OUTPUT_FORMAT_ANTHROPIC_MESSAGES, check_anthropic),
                                     (pb.OUTPUT_FORMAT_GEMINI, check_gemini)):
            built, body = self.build(session_id, output_format)
            check(body)
            breakdown = built.budget.breakdown
            self.assertLessEqual(breakdown.total_tokens + breakdown.output_reserve_tokens, window)
            self.assertGreater(len(built.summaries), 0, "compaction summarized older turns")
            if output_format == pb.OUTPUT_FORMAT_GEMINI:
                self.assertIsNone(gemini_pairs_ok(body["contents"]))
                self.assertEqual([p["functionCall"]["id"] for p in body["contents"][-2]["parts"] if "functionCall" in p],
                                 ["last_a", "last_b"])
                self.assertIn(built.summaries[0].content, body["systemInstruction"]["parts"][0]["text"])
            else:
                # The client's system prompt, then the summaries, each a marked block.
                system_text = "".join(block["text"] for block in body["system"])
                self.assertIn(built.summaries[0].content, system_text)
                self.assertEqual([b.get("cache_control") for b in body["system"]], [{"type": "ephemeral"}] * 2)
                self.assertEqual([b["type"] for b in body["messages"][-2]["content"]],
                                 ["thinking", "text", "tool_use", "tool_use"])
        NOTES.append(f"native: compacted session ({len(built.summaries)} summaries) valid in both formats")


def run():
    suite = unittest.TestSuite()
    base.setUpModule()
    try:
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(AnthropicGemini))
        result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    finally:
        base.tearDownModule()
    for note in NOTES:
        print(f"  {note}")
    if "tmp" in base.SERVER:
        base.SERVER["tmp"].cleanup()
    passed = result.testsRun - len(result.failures) - len(result.errors)
    print(f"python anthropic/gemini types: {passed} passed, {len(result.failures) + len(result.errors)} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(run())
