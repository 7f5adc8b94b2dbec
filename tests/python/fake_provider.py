"""A fake model provider on loopback for the agent-loop test: it answers the OpenAI Chat
Completions, OpenAI Responses, Anthropic Messages and Gemini generateContent endpoints
with the recorded replies of a real session, in order, converted to each provider's
response shape, and checks every request it receives against the provider's rules.

A request that breaks a rule is answered 400 (as the provider would) and the breach is
kept in `violations`, which the test asserts empty.
"""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Step:
    """One recorded model reply and the tool results that followed it."""

    content: str
    calls: list  # (call id, tool name, arguments JSON text)
    completion_tokens: int
    results: list = field(default_factory=list)  # (call id, tool name, output)


class Violation(Exception):
    pass


# --- replies in each provider's response shape ----------------------------------------


def chat_reply(step, index, prompt_tokens):
    message = {"role": "assistant", "content": step.content or None}
    if step.calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in step.calls
        ]
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "deepseek-chat",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if step.calls else "stop", "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": step.completion_tokens,
            "total_tokens": prompt_tokens + step.completion_tokens,
        },
    }


def responses_reply(step, index, prompt_tokens):
    output = []
    if step.content:
        output.append(
            {
                "type": "message",
                "id": f"msg_{index}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.content, "annotations": []}],
            }
        )
    for n, (cid, name, args) in enumerate(step.calls):
        output.append(
            {"type": "function_call", "id": f"fc_{index}_{n}", "call_id": cid, "name": name,
             "arguments": args, "status": "completed"}
        )
    return {
        "id": f"resp_{index}",
        "object": "response",
        "created_at": int(time.time()),
        "model": "deepseek-chat",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": step.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt_tokens + step.completion_tokens,
        },
    }


def anthropic_reply(step, index, prompt_tokens):
    content = [{"type": "text", "text": step.content}] if step.content else []
    content += [
        {"type": "tool_use", "id": cid, "name": name, "input": json.loads(args or "{}")}
        for cid, name, args in step.calls
    ]
    return {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use" if step.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": step.completion_tokens},
    }


def gemini_reply(step, index, prompt_tokens):
    parts = [{"text": step.content}] if step.content else []
    parts += [
        {"functionCall": {"id": cid, "name": name, "args": json.loads(args or "{}")}}
        for cid, name, args in step.calls
    ]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": step.completion_tokens,
            "totalTokenCount": prompt_tokens + step.completion_tokens,
        },
        "modelVersion": "gemini-test",
        "responseId": f"resp{index}",
    }


# --- the providers' rules ---------------------------------------------------------------


def check_chat(body):
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Violation("messages: missing or empty")
    open_calls = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                raise Violation(f"messages[{i}]: tool result {message.get('tool_call_id')!r} answers no open call")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            raise Violation(f"messages[{i}]: tool calls {sorted(open_calls)} have no result before this {role}")
        if role == "assistant":
            open_calls = {call["id"] for call in message.get("tool_calls") or []}
        elif role not in ("system", "user", "developer"):
            raise Violation(f"messages[{i}].role: {role!r}")
    if open_calls:
        raise Violation(f"tool calls {sorted(open_calls)} have no result")
    return messages[-1].get("tool_call_id") if messages[-1].get("role") == "tool" else None


def check_responses(body):
    items = body.get("input")
    if not isinstance(items, list) or not items:
        raise Violation("input: missing or empty")
    calls, answered, last = set(), set(), None
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            if item["call_id"] in calls:
                raise Violation(f"input[{i}]: call {item['call_id']!r} twice")
            calls.add(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in calls or item["call_id"] in answered:
                raise Violation(f"input[{i}]: output {item['call_id']!r} has no call before it")
            answered.add(item["call_id"])
        last = item
    if calls != answered:
        raise Violation(f"function calls {sorted(calls - answered)} have no output")
    return last.get("call_id") if last.get("type") == "function_call_output" else None


def check_anthropic(body):
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Violation("messages: missing or empty")
    if messages[0].get("role") != "user":
        raise Violation("messages[0]: the first message must be a user message")
    if not isinstance(body.get("max_tokens"), int):
        raise Violation("max_tokens: required")
    previous_uses = set()
    last = None
    for i, message in enumerate(messages):
        role = message.get("role")
        if i and role == messages[i - 1].get("role"):
            raise Violation(f"messages[{i}]: roles must alternate")
        blocks = message.get("content")
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks
        if role == "user":
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if set(results) != previous_uses:
                raise Violation(f"messages[{i}]: tool_result ids {results} do not answer {sorted(previous_uses)}")
            if results and any(b.get("type") != "tool_result" for b in blocks[: len(results)]):
                raise Violation(f"messages[{i}]: tool_result blocks must come first")
            previous_uses = set()
            last = results[-1] if results else None
        elif role == "assistant":
            previous_uses = {b["id"] for b in blocks if b.get("type") == "tool_use"}
            last = None
        else:
            raise Violation(f"messages[{i}].role: {role!r}")
    if previous_uses:
        raise Violation(f"tool_use {sorted(previous_uses)} has no tool_result")
    return last


def check_gemini(body):
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise Violation("contents: missing or empty")
    pending = []
    last = None
    for i, content in enumerate(contents):
        role = content.get("role")
        parts = content.get("parts") or []
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if role == "user":
            got = [(r.get("id"), r.get("name")) for r in responses]
            if sorted(got) != sorted(pending):
                raise Violation(f"contents[{i}]: function responses {got} do not answer {pending}")
            pending = []
            last = got[-1][0] if got else None
        elif role == "model":
            if pending:
                raise Violation(f"contents[{i}]: calls {pending} have no response")
            pending = [(p["functionCall"].get("id"), p["functionCall"]["name"]) for p in parts if "functionCall" in p]
            last = None
        else:
            raise Violation(f"contents[{i}].role: {role!r}")
    if pending:
        raise Violation(f"function calls {pending} have no response")
    return last


def body_text(body, fmt):
    """Every text the request carries, as the provider would count it (roughly)."""
    return json.dumps(body, ensure_ascii=False)


ROUTES = {
    "chat": (check_chat, chat_reply),
    "responses": (check_responses, responses_reply),
    "anthropic": (check_anthropic, anthropic_reply),
    "gemini": (check_gemini, gemini_reply),
}


class FakeProvider:
    """Serves `steps` in order on one endpoint kind at a time (`expect(kind)`)."""

    def __init__(self, steps, window_tokens, max_body_chars):
        self.steps = steps
        # Requests must carry ctxd's budget report (x-ctxd-* headers) unless turned off.
        self.require_report = True
        self.bodies = []
        self.window_tokens = window_tokens
        self.max_body_chars = max_body_chars
        self.kind = None
        self.index = 0
        self.requests = 0
        self.largest_body_chars = 0
        self.violations = []
        self.lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                status, answer = provider.handle(self.path, self.headers, raw)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def expect(self, kind, steps=None, require_report=True):
        with self.lock:
            self.kind, self.index = kind, 0
            self.steps = self.steps if steps is None else steps
            self.require_report = require_report
            self.bodies = []
            self.requests, self.largest_body_chars = 0, 0

    def close(self):
        self.http.shutdown()
        self.http.server_close()

    def _route(self, path):
        if path.endswith("/chat/completions"):
            return "chat"
        if path.endswith("/responses"):
            return "responses"
        if path.endswith("/messages"):
            return "anthropic"
        if ":generateContent" in path:
            return "gemini"
        return None

    def handle(self, path, headers, raw):
        with self.lock:
            self.requests += 1
            try:
                kind = self._route(path)
                if kind != self.kind:
                    raise Violation(f"{path}: expected a {self.kind} request")
                body = json.loads(raw)
                check, reply = ROUTES[kind]
                self.bodies.append(body)
                last_result = check(body)
                # The request is within the window by ctxd's own report, which the loop
                # sends along, and its size agrees with a window's worth of text.
                if self.require_report or "x-ctxd-total-tokens" in headers:
                    total = int(headers["x-ctxd-total-tokens"])
                    reserve = int(headers["x-ctxd-output-reserve-tokens"])
                else:
                    total, reserve = 100, 0
                if total + reserve > self.window_tokens:
                    raise Violation(f"ctxd's report: {total} + {reserve} tokens exceed the {self.window_tokens} window")
                chars = len(body_text(body, kind))
                self.largest_body_chars = max(self.largest_body_chars, chars)
                if chars > self.max_body_chars:
                    raise Violation(f"the body has {chars} characters, more than a {self.window_tokens}-token window holds")
                if self.index >= len(self.steps):
                    raise Violation("more requests than recorded replies")
                if self.index > 0:
                    previous = self.steps[self.index - 1]
                    expected = previous.results[-1][0] if previous.results else None
                    if last_result != expected:
                        raise Violation(f"the request ends with result {last_result!r}, not the latest {expected!r}")
                answer = reply(self.steps[self.index], self.index, total)
                self.index += 1
                return 200, answer
            except Violation as violation:
                self.violations.append(f"{self.kind} request {self.index}: {violation}")
                return 400, {"error": {"message": str(violation), "type": "invalid_request_error"}}
            except Exception as error:  # a malformed request is a violation too
                self.violations.append(f"{self.kind} request {self.index}: {type(error).__name__}: {error}")
                return 400, {"error": {"message": str(error), "type": "invalid_request_error"}}
