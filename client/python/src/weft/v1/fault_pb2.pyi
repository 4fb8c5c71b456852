from weft.v1 import run_pb2 as _run_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
FAULT_CODE_CAPABILITY_UNAVAILABLE: FaultCode
FAULT_CODE_FAILED_PRECONDITION: FaultCode
FAULT_CODE_ILLEGAL_TRANSITION: FaultCode
FAULT_CODE_INTERNAL: FaultCode
FAULT_CODE_INVALID_ARGUMENT: FaultCode
FAULT_CODE_NOT_FOUND: FaultCode
FAULT_CODE_OPERATION_CONFLICT: FaultCode
FAULT_CODE_PAYLOAD_TOO_LARGE: FaultCode
FAULT_CODE_PERMISSION_DENIED: FaultCode
FAULT_CODE_RESOURCE_EXHAUSTED: FaultCode
FAULT_CODE_SCHEMA_VALIDATION_FAILED: FaultCode
FAULT_CODE_SIGNAL_ACCEPTANCE_INDETERMINATE: FaultCode
FAULT_CODE_TASK_CLAIM_LOST: FaultCode
FAULT_CODE_UNAUTHENTICATED: FaultCode
FAULT_CODE_UNAVAILABLE: FaultCode
FAULT_CODE_UNIMPLEMENTED: FaultCode
FAULT_CODE_UNSPECIFIED: FaultCode

class Fault(_message.Message):
    __slots__ = ["action_id", "capability", "code", "correlation_id", "retry_after_ms", "run_id", "run_status", "signal_id", "signal_name", "transition"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    CORRELATION_ID_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_STATUS_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    TRANSITION_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    capability: str
    code: FaultCode
    correlation_id: str
    retry_after_ms: int
    run_id: str
    run_status: _run_pb2.RunStatus
    signal_id: str
    signal_name: str
    transition: str
    def __init__(self, code: _Optional[_Union[FaultCode, str]] = ..., correlation_id: _Optional[str] = ..., run_id: _Optional[str] = ..., action_id: _Optional[str] = ..., signal_name: _Optional[str] = ..., signal_id: _Optional[str] = ..., retry_after_ms: _Optional[int] = ..., run_status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., transition: _Optional[str] = ..., capability: _Optional[str] = ...) -> None: ...

class FaultCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
