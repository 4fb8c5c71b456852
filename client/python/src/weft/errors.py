"""Typed faults: every error a Weft call raises is a :class:`WeftError`.

A fault the server typed (a ``weft.v1.Fault`` detail) raises the subclass named
after its code, e.g. :class:`SignalAcceptanceIndeterminate`; an error without
one raises the subclass of its Connect code when there is one (``Unavailable``
for a server that cannot be reached, ``DeadlineExceeded`` for a deadline),
else :class:`WeftError` itself. Compare ``code`` (stable), never the message.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from buf.validate import validate_pb2
from weft.v1 import fault_pb2

#: The response header that carries a fault's correlation id.
CORRELATION_HEADER = "weft-correlation-id"

# Connect's codes by their wire name, and the HTTP status each maps from when
# a body carries none (connectrpc.com/docs/protocol#http-to-error-code).
_CONNECT_CODES = (
    "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found",
    "already_exists", "permission_denied", "resource_exhausted", "failed_precondition",
    "aborted", "out_of_range", "unimplemented", "internal", "unavailable", "data_loss",
    "unauthenticated",
)
_HTTP_TO_CONNECT = {
    400: "internal", 401: "unauthenticated", 403: "permission_denied", 404: "unimplemented",
    429: "unavailable", 502: "unavailable", 503: "unavailable", 504: "unavailable",
}


def pascal(snake: str) -> str:
    """Answers ``SIGNAL_ACCEPTANCE_INDETERMINATE`` or ``not_found`` in PascalCase."""
    return "".join(w.capitalize() for w in snake.lower().split("_"))


@dataclass(frozen=True)
class FieldViolation:
    """One field that broke a validation rule (from ``buf.validate.Violations``)."""

    #: The field's path, e.g. ``run_id`` or ``definition.actions[0].id``.
    field: str
    #: The rule's id, e.g. ``string.min_len``.
    rule_id: str
    #: The rule's human-readable message.
    message: str


class WeftError(Exception):
    """A failed Weft call.

    Attributes:
        code: the stable code: the fault code's name in PascalCase
            (``InvalidArgument``, ``SignalAcceptanceIndeterminate``, ...), or
            without a known fault the Connect code's (``Unavailable``, ``Unknown``).
        connect_code: the Connect code's wire name, e.g. ``"aborted"``.
        fault: the ``weft.v1.Fault`` detail, when the server sent one.
        fault_code: its ``weft.v1.FaultCode`` number (also one this client does not know).
        violations: the fields that broke validation rules.
        correlation_id: finds the server's log line.
        retry_after: seconds to wait before retrying, for ResourceExhausted.
        message: the server's (or the transport's) message.
        is_network_error: True when the server was not reached at all.
    """

    def __init__(
        self,
        connect_code: str,
        message: str,
        *,
        fault: Optional[fault_pb2.Fault] = None,
        violations: tuple[FieldViolation, ...] = (),
        correlation_id: str = "",
        retry_after: Optional[float] = None,
        is_network_error: bool = False,
    ) -> None:
        self.connect_code = connect_code
        self.fault = fault
        self.fault_code = fault.code if fault is not None else None
        self.code = code_of(connect_code, self.fault_code)
        self.violations = violations
        self.correlation_id = correlation_id or (fault.correlation_id if fault else "")
        self.retry_after = retry_after
        self.message = message
        self.is_network_error = is_network_error
        super().__init__(self._render())

    def _render(self) -> str:
        out = f"{self.code}: {self.message}"
        for v in self.violations:
            out += f"\n  {v.field}: {v.message} [{v.rule_id}]"
        if self.correlation_id:
            out += f" (correlation id {self.correlation_id})"
        return out


def code_of(connect_code: str, fault_code: Optional[int]) -> str:
    """The stable code: the fault's name when known, else the Connect code's.
    A deadline or a cancellation is the caller's own and keeps the Connect
    code's name whatever fault came with it (weftd's carries no fault code;
    an older weftd's said INTERNAL)."""
    if fault_code and connect_code not in ("deadline_exceeded", "canceled"):
        name = _FAULT_NAMES.get(fault_code)
        if name:
            return name
    return pascal(connect_code if connect_code in _CONNECT_CODES else "unknown")


def _fault_class(name: str, doc: str) -> type[WeftError]:
    return type(name, (WeftError,), {"__doc__": doc, "__module__": __name__})


# One subclass per weft.v1.FaultCode, named as its code, made from the
# generated enum so that a new code needs no edit here.
_FAULT_NAMES: dict[int, str] = {
    v.number: pascal(v.name.removeprefix("FAULT_CODE_"))
    for v in fault_pb2.FaultCode.DESCRIPTOR.values
    if v.number != 0
}
#: The WeftError subclass of each fault code's name.
FAULT_CLASSES: dict[str, type[WeftError]] = {
    name: _fault_class(name, f"The {name} fault (weft.v1.FaultCode).") for name in _FAULT_NAMES.values()
}
# Connect codes that no fault shares a name with, as classes of their own.
for _name in ("Canceled", "DeadlineExceeded", "Unknown", "Aborted", "AlreadyExists", "OutOfRange", "DataLoss"):
    FAULT_CLASSES[_name] = _fault_class(_name, f"A {_name} error without a Weft fault (a Connect code).")

InvalidArgument = FAULT_CLASSES["InvalidArgument"]
NotFound = FAULT_CLASSES["NotFound"]
IllegalTransition = FAULT_CLASSES["IllegalTransition"]
SignalAcceptanceIndeterminate = FAULT_CLASSES["SignalAcceptanceIndeterminate"]
OperationConflict = FAULT_CLASSES["OperationConflict"]
TaskClaimLost = FAULT_CLASSES["TaskClaimLost"]
ResourceExhausted = FAULT_CLASSES["ResourceExhausted"]
Unauthenticated = FAULT_CLASSES["Unauthenticated"]
PermissionDenied = FAULT_CLASSES["PermissionDenied"]
CapabilityUnavailable = FAULT_CLASSES["CapabilityUnavailable"]
Unavailable = FAULT_CLASSES["Unavailable"]
SchemaValidationFailed = FAULT_CLASSES["SchemaValidationFailed"]
Internal = FAULT_CLASSES["Internal"]
Unimplemented = FAULT_CLASSES["Unimplemented"]
PayloadTooLarge = FAULT_CLASSES["PayloadTooLarge"]
FailedPrecondition = FAULT_CLASSES["FailedPrecondition"]
Canceled = FAULT_CLASSES["Canceled"]
DeadlineExceeded = FAULT_CLASSES["DeadlineExceeded"]
Unknown = FAULT_CLASSES["Unknown"]


def new_error(connect_code: str, message: str, **kw: Any) -> WeftError:
    """Builds the WeftError subclass of the code the arguments give."""
    fault = kw.get("fault")
    code = code_of(connect_code, fault.code if fault is not None else None)
    cls = FAULT_CLASSES.get(code, WeftError)
    return cls(connect_code, message, **kw)


def network_error(message: str) -> WeftError:
    """The error of a call that never reached the server: Unavailable, retryable."""
    return new_error("unavailable", message, is_network_error=True)


def from_end_of_stream(err: Mapping[str, Any], headers: Mapping[str, str]) -> WeftError:
    """Converts a Connect error object (``{"code", "message", "details"}``) into a WeftError."""
    connect_code = str(err.get("code") or "unknown")
    fault: Optional[fault_pb2.Fault] = None
    violations: list[FieldViolation] = []
    for d in err.get("details") or []:
        if not isinstance(d, dict):
            continue
        raw = _b64(d.get("value", ""))
        if raw is None:
            continue
        kind = str(d.get("type", ""))
        try:
            if kind == "weft.v1.Fault" and fault is None:
                fault = fault_pb2.Fault.FromString(raw)
            elif kind == "buf.validate.Violations":
                violations += _violations(validate_pb2.Violations.FromString(raw))
        except Exception:  # a detail that does not decode is skipped, never fatal
            continue
    return new_error(
        connect_code,
        str(err.get("message") or ""),
        fault=fault,
        violations=tuple(violations),
        correlation_id=headers.get(CORRELATION_HEADER, ""),
        retry_after=_retry_after(fault, headers.get("retry-after")),
    )


def from_http(status: int, body: bytes, headers: Mapping[str, str]) -> WeftError:
    """Converts a unary call's non-200 answer into a WeftError."""
    try:
        err = json.loads(body)
        if isinstance(err, dict) and err.get("code"):
            return from_end_of_stream(err, headers)
    except ValueError:
        pass
    code = _HTTP_TO_CONNECT.get(status, "unknown")
    return new_error(code, f"HTTP {status}", correlation_id=headers.get(CORRELATION_HEADER, ""))


def _b64(s: str) -> Optional[bytes]:
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_" if ("-" in s or "_" in s) else None)
    except (binascii.Error, ValueError):
        return None


def _violations(v: validate_pb2.Violations) -> list[FieldViolation]:
    return [FieldViolation(format_field_path(x.field), x.rule_id, x.message) for x in v.violations]


def format_field_path(path: validate_pb2.FieldPath) -> str:
    """Formats a protovalidate field path as ``a.b[0].c["key"]``."""
    out = ""
    for el in path.elements:
        out += ("." if out else "") + el.field_name
        sub = el.WhichOneof("subscript")
        if sub == "string_key":
            out += "[" + json.dumps(el.string_key) + "]"
        elif sub == "bool_key":
            out += "[" + ("true" if el.bool_key else "false") + "]"
        elif sub is not None:
            out += f"[{getattr(el, sub)}]"
    return out


def _retry_after(fault: Optional[fault_pb2.Fault], header: Optional[str]) -> Optional[float]:
    if fault is not None and fault.retry_after_ms:
        return fault.retry_after_ms / 1000
    if header and header.strip().isdigit():
        return float(header.strip())
    return None
