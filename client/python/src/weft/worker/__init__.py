"""The asyncio worker runtime (see :class:`Worker`)."""

from .failure import ActivityError, NonRetryable, RateLimited, side_effect_possible
from .runtime import (
    COMPLETED_RESULT_UNAVAILABLE,
    COMPLETED_WITH_RESULT,
    INDETERMINATE,
    NOT_COMPLETED,
    Activity,
    ActivityContext,
    ActivityInfo,
    ShutdownTimeout,
    VerifyResult,
    Worker,
    context,
    heartbeat_every,
)
from weft.v1.common_pb2 import ErrorClass

__all__ = [
    "Activity", "ActivityContext", "ActivityError", "ActivityInfo", "ErrorClass", "NonRetryable",
    "RateLimited", "ShutdownTimeout", "VerifyResult", "Worker", "context", "heartbeat_every",
    "side_effect_possible", "NOT_COMPLETED", "COMPLETED_WITH_RESULT", "COMPLETED_RESULT_UNAVAILABLE",
    "INDETERMINATE",
]
