"""What the helpers accept, turned into the protocol's messages and JSON texts: formats,
messages, tools, policies, and provider bodies (the providers' SDK objects, dicts, JSON
text)."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

from .v1 import ctxd_pb2 as pb


class Format(enum.IntEnum):
    """The shape BuildMessages returns and AppendNative reads."""

    NEUTRAL = pb.OUTPUT_FORMAT_NEUTRAL
    OPENAI_CHAT = pb.OUTPUT_FORMAT_OPENAI_CHAT
    ANTHROPIC_MESSAGES = pb.OUTPUT_FORMAT_ANTHROPIC_MESSAGES
    OPENAI_RESPONSES = pb.OUTPUT_FORMAT_OPENAI_RESPONSES
    GEMINI = pb.OUTPUT_FORMAT_GEMINI


# ctxd's recall tools (a session whose policy has recall_tools gets them in every build).
RECALL_TOOLS = ("ctxd_recall_search", "ctxd_recall_expand")


def is_recall_tool(name: str) -> bool:
    """Whether a tool call is to one of ctxd's recall tools: answer it with
    `session.answer_recall(call_id)` instead of running it."""
    return name in RECALL_TOOLS


@dataclass(frozen=True)
class ToolResult:
    """A tool's output for a call, in no provider's shape: `append_tool_results` writes
    it in the format's (Gemini needs the tool `name`)."""

    call_id: str
    output: str
    name: str = ""


# A message as the helpers accept it: the proto message, or a dict in the OpenAI Chat
# shape ({"role": "user", "content": "..."}, assistant `tool_calls`, tool `tool_call_id`).
MessageLike = Union[pb.Message, Mapping[str, Any]]
# Tools: definitions (proto, {"name", "description", "parameters"} or the OpenAI
# {"type": "function", "function": {...}} shape), or only their token count.
ToolLike = Union[pb.ToolDefinition, Mapping[str, Any]]
ToolsLike = Union[Sequence[ToolLike], int, None]

_ROLES = {
    "system": pb.ROLE_SYSTEM,
    "developer": pb.ROLE_SYSTEM,
    "user": pb.ROLE_USER,
    "assistant": pb.ROLE_ASSISTANT,
    "tool": pb.ROLE_TOOL,
}


def user(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, content=text)


def system(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_SYSTEM, content=text)


def assistant(text: str = "", tool_calls: Sequence[pb.ToolCall] = (), reasoning: str = "") -> pb.Message:
    return pb.Message(role=pb.ROLE_ASSISTANT, content=text, tool_calls=list(tool_calls), reasoning=reasoning)


def tool_call(call_id: str, name: str, arguments: Union[str, Mapping[str, Any]] = "") -> pb.ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return pb.ToolCall(id=call_id, name=name, arguments_json=text)


def tool_result(call_id: str, output: str, name: str = "") -> pb.Message:
    return pb.Message(role=pb.ROLE_TOOL, tool_call_id=call_id, content=output, name=name)


def message(value: MessageLike, where: str = "message") -> pb.Message:
    """A proto Message from a proto Message or an OpenAI Chat-shaped dict."""
    if isinstance(value, pb.Message):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: expected a ctxd Message or a dict, got {type(value).__name__}")
    role = _ROLES.get(str(value.get("role", "")))
    if role is None:
        raise ValueError(f"{where}.role: must be one of {', '.join(_ROLES)}, got {value.get('role')!r}")
    out = pb.Message(role=role)
    content = value.get("content")
    if isinstance(content, str):
        out.content = content
    elif isinstance(content, Sequence):
        for index, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") == "text":
                out.parts.append(pb.ContentPart(text=str(part.get("text", ""))))
            else:
                raise ValueError(f"{where}.content[{index}]: only text parts are read from dicts")
    elif content is not None:
        raise ValueError(f"{where}.content: expected a string or a list of text parts")
    for index, call in enumerate(value.get("tool_calls") or ()):
        function = call.get("function") or {}
        out.tool_calls.append(
            pb.ToolCall(
                id=str(call.get("id", "")),
                name=str(function.get("name", call.get("name", ""))),
                arguments_json=str(function.get("arguments", call.get("arguments", "")) or ""),
            )
        )
    for key in ("tool_call_id", "name", "reasoning"):
        if value.get(key):
            setattr(out, key, str(value[key]))
    if value.get("reasoning_content"):
        out.reasoning = str(value["reasoning_content"])
    if value.get("pinned"):
        out.pinned = True
    for key, text in (value.get("metadata") or {}).items():
        out.metadata[str(key)] = str(text)
    return out


def tools(value: ToolsLike) -> Optional[pb.Tools]:
    if value is None:
        return None
    if isinstance(value, int):
        return pb.Tools(token_count=value)
    items = []
    for index, tool in enumerate(value):
        if isinstance(tool, pb.ToolDefinition):
            items.append(tool)
            continue
        spec = tool.get("function", tool) if tool.get("type") == "function" else tool
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tools[{index}].name: must be a non-empty string")
        schema = spec.get("parameters", spec.get("input_schema"))
        items.append(
            pb.ToolDefinition(
                name=name,
                description=str(spec.get("description", "")),
                parameters_json_schema="" if schema is None else json.dumps(schema),
            )
        )
    return pb.Tools(definitions=pb.ToolDefinitionList(items=items))


def policy(value: Union[pb.Policy, Mapping[str, Any], None]) -> Optional[pb.Policy]:
    """A Policy from the proto or a dict of its fields (`{"context_window_tokens": 8000}`)."""
    if value is None or isinstance(value, pb.Policy):
        return value
    return pb.Policy(**dict(value))


def usage(value: Union[pb.Usage, Mapping[str, int], None]) -> Optional[pb.Usage]:
    if value is None or isinstance(value, pb.Usage):
        return value
    return pb.Usage(**dict(value))


def provider_json(value: Any) -> Any:
    """A provider object as plain JSON data: the providers' SDK response and param types
    (pydantic models: openai, anthropic, google-genai), dicts and lists of them."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return json.loads(to_json())
    if isinstance(value, Mapping):
        return {str(key): provider_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [provider_json(item) for item in value]
    return value


def response_text(value: Any) -> str:
    """A provider response as the JSON text AppendNative reads: an SDK object, a dict, or
    a JSON text (str or bytes, passed through)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    return json.dumps(provider_json(value))


def items_text(results: Any, format: Format) -> str:
    """Request items as the JSON array text AppendNative reads. `results` is a JSON text,
    or a list of provider items (SDK objects or dicts) and `ToolResult`s; consecutive
    ToolResults are written in the format's shape (one user message for Anthropic's and
    Gemini's results of one step)."""
    if isinstance(results, bytes):
        return results.decode("utf-8")
    if isinstance(results, str):
        return results
    items: list[Any] = []
    pending: list[ToolResult] = []
    for item in results:
        if isinstance(item, ToolResult):
            pending.append(item)
            continue
        items.extend(_tool_result_items(pending, format))
        pending = []
        items.append(provider_json(item))
    items.extend(_tool_result_items(pending, format))
    return json.dumps(items)


def _tool_result_items(results: list[ToolResult], format: Format) -> list[dict[str, Any]]:
    if not results:
        return []
    if format == Format.OPENAI_CHAT:
        return [{"role": "tool", "tool_call_id": r.call_id, "content": r.output} for r in results]
    if format == Format.OPENAI_RESPONSES:
        return [{"type": "function_call_output", "call_id": r.call_id, "output": r.output} for r in results]
    if format == Format.ANTHROPIC_MESSAGES:
        blocks = [{"type": "tool_result", "tool_use_id": r.call_id, "content": r.output} for r in results]
        return [{"role": "user", "content": blocks}]
    if format == Format.GEMINI:
        parts = [
            {"functionResponse": {"id": r.call_id, "name": r.name, "response": {"output": r.output}}}
            for r in results
        ]
        return [{"role": "user", "parts": parts}]
    raise ValueError(f"format: {format.name} has no native shape; use append() for neutral messages")
