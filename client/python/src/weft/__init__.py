"""Weft's Python SDK: a client of every weft.v1 service over Connect
(:class:`Client`, :class:`AsyncClient`), the typed faults of the API
(:mod:`weft.errors`), and an asyncio worker runtime (:mod:`weft.worker`).

The messages are generated from proto/weft/v1 into :mod:`weft.v1`
(``from weft.v1 import run_pb2``).
"""

from .aio import AsyncClient
from .client import Client
from .errors import (
    CapabilityUnavailable,
    DeadlineExceeded,
    FailedPrecondition,
    FieldViolation,
    IllegalTransition,
    Internal,
    InvalidArgument,
    NotFound,
    OperationConflict,
    PayloadTooLarge,
    PermissionDenied,
    ResourceExhausted,
    SchemaValidationFailed,
    SignalAcceptanceIndeterminate,
    TaskClaimLost,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    WeftError,
)
from .retry import RetryPolicy
from .tls import TLS
from .values import (
    NoResult,
    from_value,
    is_terminal,
    result,
    run_status_name,
    search_attribute,
    search_attributes,
    to_value,
    wake_at,
)

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "Client", "RetryPolicy", "TLS", "WeftError", "FieldViolation",
    "CapabilityUnavailable", "DeadlineExceeded", "FailedPrecondition", "IllegalTransition", "Internal",
    "InvalidArgument", "NotFound", "OperationConflict", "PayloadTooLarge", "PermissionDenied",
    "ResourceExhausted", "SchemaValidationFailed", "SignalAcceptanceIndeterminate", "TaskClaimLost",
    "Unauthenticated", "Unavailable", "Unimplemented",
    "NoResult", "from_value", "is_terminal", "result", "run_status_name", "to_value",
    "search_attribute", "search_attributes", "wake_at",
]
