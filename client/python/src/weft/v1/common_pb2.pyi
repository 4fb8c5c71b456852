from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ERROR_CLASS_AGENT_ERROR: ErrorClass
ERROR_CLASS_AUTH_DENY: ErrorClass
ERROR_CLASS_BUSINESS_CONFLICT: ErrorClass
ERROR_CLASS_CANCELLED: ErrorClass
ERROR_CLASS_EXTERNAL: ErrorClass
ERROR_CLASS_GOVERNANCE: ErrorClass
ERROR_CLASS_POLICY_DENY: ErrorClass
ERROR_CLASS_RATE_LIMIT: ErrorClass
ERROR_CLASS_RECONCILIATION_INDETERMINATE: ErrorClass
ERROR_CLASS_RECONCILIATION_RESULT_UNAVAILABLE: ErrorClass
ERROR_CLASS_SCHEDULE_TO_START: ErrorClass
ERROR_CLASS_TIMEOUT: ErrorClass
ERROR_CLASS_TRANSIENT: ErrorClass
ERROR_CLASS_TRANSPORT: ErrorClass
ERROR_CLASS_UNKNOWN: ErrorClass
ERROR_CLASS_UNSPECIFIED: ErrorClass
ERROR_CLASS_VALIDATION: ErrorClass

class AcceptedSignalResult(_message.Message):
    __slots__ = ["accepted", "accepted_at", "run_id", "signal_id", "signal_name", "signal_storage_key"]
    ACCEPTED_AT_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_STORAGE_KEY_FIELD_NUMBER: _ClassVar[int]
    accepted: bool
    accepted_at: _timestamp_pb2.Timestamp
    run_id: str
    signal_id: str
    signal_name: str
    signal_storage_key: str
    def __init__(self, accepted: bool = ..., run_id: _Optional[str] = ..., signal_name: _Optional[str] = ..., signal_id: _Optional[str] = ..., accepted_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., signal_storage_key: _Optional[str] = ...) -> None: ...

class ArtifactRef(_message.Message):
    __slots__ = ["expires_at", "kind", "sha256", "size_bytes", "uri"]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    URI_FIELD_NUMBER: _ClassVar[int]
    expires_at: _timestamp_pb2.Timestamp
    kind: str
    sha256: str
    size_bytes: int
    uri: str
    def __init__(self, uri: _Optional[str] = ..., kind: _Optional[str] = ..., sha256: _Optional[str] = ..., size_bytes: _Optional[int] = ..., expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SecretRef(_message.Message):
    __slots__ = ["name", "ref"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    name: str
    ref: str
    def __init__(self, name: _Optional[str] = ..., ref: _Optional[str] = ...) -> None: ...

class ErrorClass(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
