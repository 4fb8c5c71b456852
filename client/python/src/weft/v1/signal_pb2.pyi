from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
MANUAL_OUTCOME_CANCELLED: ManualOutcome
MANUAL_OUTCOME_FAILED: ManualOutcome
MANUAL_OUTCOME_SUCCEEDED: ManualOutcome
MANUAL_OUTCOME_UNSPECIFIED: ManualOutcome

class CompleteManualActionRequest(_message.Message):
    __slots__ = ["action_id", "actor_user_id", "completed_at", "completion_token", "evidence_refs", "notes", "outcome", "output", "run_id", "schema_version"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_USER_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_REFS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    actor_user_id: str
    completed_at: _timestamp_pb2.Timestamp
    completion_token: str
    evidence_refs: _containers.RepeatedScalarFieldContainer[str]
    notes: str
    outcome: ManualOutcome
    output: _struct_pb2.Value
    run_id: str
    schema_version: int
    def __init__(self, schema_version: _Optional[int] = ..., run_id: _Optional[str] = ..., action_id: _Optional[str] = ..., completion_token: _Optional[str] = ..., outcome: _Optional[_Union[ManualOutcome, str]] = ..., actor_user_id: _Optional[str] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., notes: _Optional[str] = ..., evidence_refs: _Optional[_Iterable[str]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class CompleteManualActionResponse(_message.Message):
    __slots__ = ["duplicate", "result"]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    result: ManualCompletionResult
    def __init__(self, result: _Optional[_Union[ManualCompletionResult, _Mapping]] = ..., duplicate: bool = ...) -> None: ...

class ManualCompletionResult(_message.Message):
    __slots__ = ["accepted_at", "action_id", "actor_user_id", "completion_token", "evidence_refs", "notes", "outcome", "principal", "run_id"]
    ACCEPTED_AT_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_USER_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_REFS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    accepted_at: _timestamp_pb2.Timestamp
    action_id: str
    actor_user_id: str
    completion_token: str
    evidence_refs: _containers.RepeatedScalarFieldContainer[str]
    notes: str
    outcome: ManualOutcome
    principal: str
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., action_id: _Optional[str] = ..., completion_token: _Optional[str] = ..., outcome: _Optional[_Union[ManualOutcome, str]] = ..., actor_user_id: _Optional[str] = ..., accepted_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., principal: _Optional[str] = ..., notes: _Optional[str] = ..., evidence_refs: _Optional[_Iterable[str]] = ...) -> None: ...

class SignalRunRequest(_message.Message):
    __slots__ = ["payload", "run_id", "signal_id", "signal_name"]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    payload: _struct_pb2.Value
    run_id: str
    signal_id: str
    signal_name: str
    def __init__(self, run_id: _Optional[str] = ..., signal_name: _Optional[str] = ..., signal_id: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class SignalRunResponse(_message.Message):
    __slots__ = ["duplicate", "result"]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    result: _common_pb2.AcceptedSignalResult
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., duplicate: bool = ...) -> None: ...

class ManualOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
