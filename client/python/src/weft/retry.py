"""Retries of calls that are safe to repeat as they are (the Go and TS clients' policy)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Optional, TypeVar

from .errors import WeftError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How a call that is safe to repeat is retried.

    The default: 4 attempts, waiting 0.1, 0.2 and 0.4 s (each with up to 20%
    jitter), capped at 2 s. ``max_attempts=1`` disables retries.
    """

    max_attempts: int = 4
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0

    def backoff(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """The wait in seconds after the given failed attempt (1-based)."""
        base = min(self.initial_backoff * self.multiplier ** max(0, attempt - 1), self.max_backoff)
        return base * (1 + 0.2 * rand())


DEFAULT_RETRY = RetryPolicy()
NO_RETRY = RetryPolicy(max_attempts=1)


def is_transient(err: BaseException) -> bool:
    """True when repeating the same call may succeed: the server was
    unavailable or not reached, or the call's deadline passed. Answers about
    the request itself (invalid argument, claim lost, 429, ...) are not."""
    return isinstance(err, WeftError) and err.connect_code in ("unavailable", "deadline_exceeded")


def _wait(policy: RetryPolicy, attempt: int, err: WeftError) -> float:
    return max(policy.backoff(attempt), err.retry_after or 0.0)


def call_sync(policy: RetryPolicy, call: Callable[[], T],
              on_retry: Optional[Callable[[int, WeftError], None]] = None) -> T:
    """Calls ``call`` until it succeeds, fails with a non-transient error, or
    the attempts run out; raises the last error. ``call`` must send the same
    request each time: that is what makes repeating it safe."""
    attempt = 1
    while True:
        try:
            return call()
        except WeftError as e:
            if attempt >= policy.max_attempts or not is_transient(e):
                raise
            if on_retry:
                on_retry(attempt, e)
            time.sleep(_wait(policy, attempt, e))
            attempt += 1


async def call_async(policy: RetryPolicy, call: Callable[[], Awaitable[T]],
                     on_retry: Optional[Callable[[int, WeftError], None]] = None) -> T:
    """The asyncio form of :func:`call_sync`."""
    attempt = 1
    while True:
        try:
            return await call()
        except WeftError as e:
            if attempt >= policy.max_attempts or not is_transient(e):
                raise
            if on_retry:
                on_retry(attempt, e)
            await asyncio.sleep(_wait(policy, attempt, e))
            attempt += 1
