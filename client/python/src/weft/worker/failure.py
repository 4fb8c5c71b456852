"""Activity failures: the error class that decides the engine's retry
(docs/semantics.md#error-classes), an application code, and whether the
external side effect may have happened."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from weft.v1 import common_pb2

#: The longest failure message reported (the API allows 4096 characters).
MAX_MESSAGE_CHARS = 2048
#: The longest application error code reported.
MAX_CODE_CHARS = 128


class ActivityError(Exception):
    """Raise from an activity to report a failure with its class and code.

    Any other exception is reported with class UNKNOWN (retried until the
    attempts run out). The message is reported to weftd: keep payloads and
    secrets out of it.
    """

    def __init__(self, message: str = "failed", *, error_class: int = common_pb2.ERROR_CLASS_UNKNOWN,
                 code: str = "", side_effect_possible: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.error_class = error_class or common_pb2.ERROR_CLASS_UNKNOWN
        self.code = code
        self.side_effect_possible = side_effect_possible


class NonRetryable(ActivityError):
    """A failure no retry can fix: class BUSINESS_CONFLICT by default (or
    another class the engine does not retry: VALIDATION, POLICY_DENY,
    AUTH_DENY, GOVERNANCE). An action's ``retryable_errors`` can still say otherwise."""

    def __init__(self, message: str = "failed", *, code: str = "",
                 error_class: int = common_pb2.ERROR_CLASS_BUSINESS_CONFLICT) -> None:
        super().__init__(message, error_class=error_class, code=code)


class RateLimited(ActivityError):
    """The external system refused for now: class RATE_LIMIT (retried). With
    ``retry_after`` (seconds, e.g. its Retry-After) weftd starts the next
    attempt no sooner: at the later of it and the retry policy's backoff, at
    most a day (docs/semantics.md#retry-after). The worker's slot is free at once."""

    def __init__(self, message: str = "rate limited", *, retry_after: Optional[float] = None,
                 code: str = "rate_limited") -> None:
        super().__init__(message, error_class=common_pb2.ERROR_CLASS_RATE_LIMIT, code=code)
        self.retry_after = retry_after


#: The longest retry_after the API takes, in milliseconds: a day.
MAX_RETRY_AFTER_MS = 86_400_000


def retry_after_ms(seconds: Optional[float]) -> int:
    """``seconds`` as the API's retry_after_ms: whole milliseconds, rounded
    up, within its bound; 0 for none."""
    if not seconds or seconds <= 0:
        return 0
    return min(math.ceil(seconds * 1000), MAX_RETRY_AFTER_MS)


def side_effect_possible(err: BaseException) -> ActivityError:
    """``raise side_effect_possible(e) from e``: the external effect may have
    happened, so weftd verifies (when the activity has ``verify``) before any
    retry. Keeps the class and code of an ActivityError."""
    if isinstance(err, ActivityError):
        return ActivityError(err.message, error_class=err.error_class, code=err.code, side_effect_possible=True)
    return ActivityError(message_of(err), side_effect_possible=True)


@dataclass(frozen=True)
class Classified:
    """A failure as reported."""

    error_class: int
    code: str
    message: str
    side_effect_possible: bool = False
    #: Seconds before the next attempt may start (RateLimited); None: the backoff alone.
    retry_after: Optional[float] = None


def classify(err: BaseException, aborted: Optional[str]) -> Classified:
    """The failure to report for an activity's error, given why the runtime
    stopped it (if it did): an ActivityError wins; then a cancel request
    (CANCELLED) and the deadline (TIMEOUT); anything else is UNKNOWN."""
    if isinstance(err, ActivityError):
        return Classified(err.error_class, err.code, err.message, err.side_effect_possible,
                          getattr(err, "retry_after", None))
    message = message_of(err)
    if aborted == "cancel-requested":
        return Classified(common_pb2.ERROR_CLASS_CANCELLED, "cancel_requested", message)
    if aborted == "deadline":
        return Classified(common_pb2.ERROR_CLASS_TIMEOUT, "deadline_exceeded", message)
    return Classified(common_pb2.ERROR_CLASS_UNKNOWN, "", message)


def message_of(err: BaseException) -> str:
    """The error's message, or its type's name when it has none."""
    return str(err) or type(err).__name__


def truncate(s: str, n: int) -> str:
    """Cuts s to at most n characters, ending a cut string with an ellipsis."""
    return s if len(s) <= n else s[: n - 1] + "\u2026"
