"""Conversions between Python values and the API's messages, and small readers
that never fail on what a newer server may send (unknown enum numbers)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import inspect
import typing
import uuid
from typing import Any, Mapping, Optional, Union

from google.protobuf import json_format, struct_pb2, timestamp_pb2
from google.protobuf.message import Message

from weft.v1 import definition_pb2, run_pb2, search_pb2

#: JSON as Python holds it.
JSON = Union[None, bool, int, float, str, list, dict]

TERMINAL = (run_pb2.RUN_STATUS_COMPLETED, run_pb2.RUN_STATUS_FAILED, run_pb2.RUN_STATUS_CANCELLED)


def to_value(obj: Any) -> struct_pb2.Value:
    """Converts JSON (dicts, lists, str, numbers, bools, None) into a
    ``google.protobuf.Value``; a dataclass is converted through its fields."""
    v = struct_pb2.Value()
    json_format.ParseDict(_plain(obj), v)
    return v


def _plain(obj: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _plain(dataclasses.asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (_dt.datetime, _dt.date)):
        return obj.isoformat()
    return obj


def from_value(value: Optional[struct_pb2.Value]) -> JSON:
    """Converts a ``google.protobuf.Value`` back into JSON; None when unset."""
    if value is None or value.WhichOneof("kind") is None:
        return None
    return json_format.MessageToDict(value)


def from_value_field(msg: Message, field: str) -> JSON:
    """JSON of a message's Value field, None when the field is unset."""
    return from_value(getattr(msg, field)) if msg.HasField(field) else None


def timestamp(when: Optional[_dt.datetime] = None) -> timestamp_pb2.Timestamp:
    """A Timestamp of ``when`` (default now, UTC)."""
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime((when or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc))
    return ts


def definition(source: Union[definition_pb2.WorkflowDefinition, Mapping[str, Any]]) -> definition_pb2.WorkflowDefinition:
    """A WorkflowDefinition from a message or its proto JSON form (a dict)."""
    if isinstance(source, definition_pb2.WorkflowDefinition):
        return source
    if isinstance(source, Mapping):
        return json_format.ParseDict(dict(source), definition_pb2.WorkflowDefinition())
    raise TypeError(f"definition: want a WorkflowDefinition or a dict, got {type(source).__name__}")


#: A search attribute's value as Python gives it: a str is a keyword, then
#: bool, int, float and datetime (docs/semantics.md#search-attributes).
SearchValue = Union[str, bool, int, float, _dt.datetime, "search_pb2.SearchAttributeValue"]


def search_attribute(value: SearchValue) -> search_pb2.SearchAttributeValue:
    """A SearchAttributeValue of a Python value: a str is a keyword, a bool a
    bool (before int: a bool is an int in Python), an int an int, a float a
    double, a datetime a time; a SearchAttributeValue is taken as it is."""
    if isinstance(value, search_pb2.SearchAttributeValue):
        return value
    if isinstance(value, str):
        return search_pb2.SearchAttributeValue(keyword_value=value)
    if isinstance(value, bool):
        return search_pb2.SearchAttributeValue(bool_value=value)
    if isinstance(value, int):
        return search_pb2.SearchAttributeValue(int_value=value)
    if isinstance(value, float):
        return search_pb2.SearchAttributeValue(double_value=value)
    if isinstance(value, _dt.datetime):
        return search_pb2.SearchAttributeValue(time_value=timestamp(value))
    raise TypeError(f"search attribute: want str, bool, int, float or datetime, got {type(value).__name__}")


def search_attributes(run: run_pb2.Run) -> dict[str, Any]:
    """A run's search attributes as Python values (the inverse of
    :func:`search_attribute`: a time is an aware UTC datetime)."""
    out: dict[str, Any] = {}
    for name, v in run.search_attributes.items():
        kind = v.WhichOneof("value")
        if kind == "time_value":
            out[name] = v.time_value.ToDatetime(tzinfo=_dt.timezone.utc)
        elif kind is not None:
            out[name] = getattr(v, kind)
    return out


def wake_at(step: run_pb2.Step) -> Optional[_dt.datetime]:
    """When a sleep step wakes (an aware UTC datetime), None when it has no
    wake time (docs/semantics.md#sleep)."""
    if not step.HasField("wake_at"):
        return None
    return step.wake_at.ToDatetime(tzinfo=_dt.timezone.utc)


def enum_name(enum: Any, number: int) -> str:
    """An enum value's name, or ``UNRECOGNIZED_<n>`` for a number this client does not know."""
    try:
        return enum.Name(number)
    except ValueError:
        return f"UNRECOGNIZED_{number}"


def run_status_name(status: int) -> str:
    """``COMPLETED`` for RUN_STATUS_COMPLETED; see :func:`enum_name`."""
    return enum_name(run_pb2.RunStatus, status).removeprefix("RUN_STATUS_")


def is_terminal(status: int) -> bool:
    """True for COMPLETED, FAILED and CANCELLED; a status this client does not know is not."""
    return status in TERMINAL


def new_id() -> str:
    """A random UUID, for signal ids and run request ids."""
    return str(uuid.uuid4())


class NoResult(LookupError):
    """The run has no result: it is not COMPLETED, its definition names no
    result_action_id, or that action did not succeed."""


def result(run: run_pb2.Run, as_type: Any = None) -> Any:
    """A run's result (the output of the action its definition names in
    result_action_id) as JSON, or filled into the dataclass ``as_type``;
    raises NoResult when there is none."""
    if not run.HasField("result"):
        raise NoResult(f"run {run.run_id} has no result")
    value = from_value(run.result)
    if as_type is None:
        return value
    return convert(as_type, value)


def convert(tp: Any, value: Any) -> Any:
    """JSON into the annotated type: a dataclass (fields by name, nested
    dataclasses too), or the JSON as it is for any other annotation."""
    if value is None or tp is None or tp is inspect.Parameter.empty or tp is Any:
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise TypeError(f"{tp.__name__} needs an object, got {type(value).__name__}")
        hints = typing.get_type_hints(tp)
        known = {f.name for f in dataclasses.fields(tp)}
        return tp(**{k: convert(hints.get(k), v) for k, v in value.items() if k in known})
    return value
