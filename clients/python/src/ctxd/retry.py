"""When a call is tried again: on UNAVAILABLE (the server restarting, a dropped
connection, the database briefly away), with exponential backoff and full jitter; and on
RESOURCE_EXHAUSTED that carries the server's RetryInfo (a rate quota that will have room
soon), after the delay it names.

Appends are retried safely: the client gives every logical AppendTurn / AppendNative
call an idempotency key once and sends the same key on each retry, so an append the
server committed before the connection dropped is answered from its stored response
(`replayed`) instead of being appended twice.
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import grpc


@dataclass(frozen=True)
class RetryPolicy:
    """`max_attempts` counts the first try (1: never retry); `max_elapsed_s` bounds the
    whole call, retries included. Events streams reconnect under the same backoff, with
    `max_attempts` counted from the last item received."""

    max_attempts: int = 5
    initial_backoff_s: float = 0.1
    max_backoff_s: float = 5.0
    multiplier: float = 2.0
    max_elapsed_s: float = 30.0
    codes: frozenset[grpc.StatusCode] = field(default_factory=lambda: frozenset({grpc.StatusCode.UNAVAILABLE}))

    def delays(self) -> Iterator[float]:
        """The pauses before each retry (at most max_attempts - 1 of them), stopping once
        the next pause would pass max_elapsed_s."""
        started = time.monotonic()
        ceiling = self.initial_backoff_s
        for _ in range(max(self.max_attempts - 1, 0)):
            delay = random.uniform(0, ceiling)
            if time.monotonic() - started + delay > self.max_elapsed_s:
                return
            yield delay
            ceiling = min(ceiling * self.multiplier, self.max_backoff_s)

    def retries(self, code: Optional[grpc.StatusCode]) -> bool:
        return code in self.codes

    def wait(self, error: Any, backoff: float) -> Optional[float]:
        """The pause before trying `error`'s call again, or None: not retried. A code of
        the policy (UNAVAILABLE): `backoff`. RESOURCE_EXHAUSTED with the server's
        RetryInfo: its delay, when that is at most max_backoff_s (a longer wait is the
        caller's to decide); without RetryInfo (a limit, not a rate) it is not retried."""
        code = getattr(error, "code", None)
        if code in self.codes:
            return backoff
        delay = getattr(error, "retry_delay_s", None)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED and delay is not None and 0 <= delay <= self.max_backoff_s:
            return float(delay)
        return None


def stream_reset(code: Optional[grpc.StatusCode], message: str) -> bool:
    """A stream the peer or a proxy reset (HTTP/2 RST_STREAM), which gRPC reports as
    INTERNAL or CANCELLED: an events stream resumes after it like after UNAVAILABLE."""
    return code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.CANCELLED) and "RST_STREAM" in message


NO_RETRY = RetryPolicy(max_attempts=1)

# Events streams: a server restart takes seconds; keep resuming for a minute of silence.
EVENTS_RETRY = RetryPolicy(max_attempts=1_000_000, max_elapsed_s=60.0)


def idempotency_key() -> str:
    """A new key for one logical append (sent again, unchanged, on each of its retries)."""
    return f"ctxd-py-{uuid.uuid4().hex}"


# Channel options so a restarted server is found again quickly (gRPC's default
# reconnect backoff grows to two minutes).
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
)
