from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import definition_pb2 as _definition_pb2
from weft.v1 import run_pb2 as _run_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
OVERLAP_POLICY_ALLOW_ALL: OverlapPolicy
OVERLAP_POLICY_BUFFER_ONE: OverlapPolicy
OVERLAP_POLICY_SKIP: OverlapPolicy
OVERLAP_POLICY_UNSPECIFIED: OverlapPolicy

class BackfillScheduleRequest(_message.Message):
    __slots__ = ["end_time", "schedule_id", "start_time"]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    end_time: _timestamp_pb2.Timestamp
    schedule_id: str
    start_time: _timestamp_pb2.Timestamp
    def __init__(self, schedule_id: _Optional[str] = ..., start_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class BackfillScheduleResponse(_message.Message):
    __slots__ = ["fire_times"]
    FIRE_TIMES_FIELD_NUMBER: _ClassVar[int]
    fire_times: _containers.RepeatedCompositeFieldContainer[_timestamp_pb2.Timestamp]
    def __init__(self, fire_times: _Optional[_Iterable[_Union[_timestamp_pb2.Timestamp, _Mapping]]] = ...) -> None: ...

class CreateScheduleRequest(_message.Message):
    __slots__ = ["definition", "environment_id", "input", "paused", "project_id", "schedule_id", "spec"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    definition: _definition_pb2.WorkflowDefinition
    environment_id: str
    input: _struct_pb2.Value
    paused: bool
    project_id: str
    schedule_id: str
    spec: ScheduleSpec
    def __init__(self, schedule_id: _Optional[str] = ..., spec: _Optional[_Union[ScheduleSpec, _Mapping]] = ..., definition: _Optional[_Union[_definition_pb2.WorkflowDefinition, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ..., paused: bool = ...) -> None: ...

class CreateScheduleResponse(_message.Message):
    __slots__ = ["schedule"]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class DeleteScheduleRequest(_message.Message):
    __slots__ = ["schedule_id"]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class DeleteScheduleResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetScheduleRequest(_message.Message):
    __slots__ = ["next_fire_count", "schedule_id"]
    NEXT_FIRE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    next_fire_count: int
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ..., next_fire_count: _Optional[int] = ...) -> None: ...

class GetScheduleResponse(_message.Message):
    __slots__ = ["schedule"]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ListSchedulesRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSchedulesResponse(_message.Message):
    __slots__ = ["next_page_token", "schedules"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    schedules: _containers.RepeatedCompositeFieldContainer[Schedule]
    def __init__(self, schedules: _Optional[_Iterable[_Union[Schedule, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PauseScheduleRequest(_message.Message):
    __slots__ = ["schedule_id"]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class PauseScheduleResponse(_message.Message):
    __slots__ = ["schedule"]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ResumeScheduleRequest(_message.Message):
    __slots__ = ["schedule_id"]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class ResumeScheduleResponse(_message.Message):
    __slots__ = ["schedule"]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class Schedule(_message.Message):
    __slots__ = ["buffered_fire_time", "created_at", "created_by", "definition", "environment_id", "failed", "fires", "input", "last_error", "last_fire_lag_ms", "last_fire_time", "last_run_id", "missed", "next_fire_times", "paused", "pending_fires", "project_id", "schedule_id", "skipped", "spec"]
    BUFFERED_FIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    FIRES_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_FIRE_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_FIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    MISSED_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRE_TIMES_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIRES_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    buffered_fire_time: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    created_by: str
    definition: _definition_pb2.WorkflowDefinition
    environment_id: str
    failed: int
    fires: int
    input: _struct_pb2.Value
    last_error: str
    last_fire_lag_ms: int
    last_fire_time: _timestamp_pb2.Timestamp
    last_run_id: str
    missed: int
    next_fire_times: _containers.RepeatedCompositeFieldContainer[_timestamp_pb2.Timestamp]
    paused: bool
    pending_fires: int
    project_id: str
    schedule_id: str
    skipped: int
    spec: ScheduleSpec
    def __init__(self, schedule_id: _Optional[str] = ..., spec: _Optional[_Union[ScheduleSpec, _Mapping]] = ..., definition: _Optional[_Union[_definition_pb2.WorkflowDefinition, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ..., paused: bool = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_fire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_run_id: _Optional[str] = ..., fires: _Optional[int] = ..., skipped: _Optional[int] = ..., missed: _Optional[int] = ..., failed: _Optional[int] = ..., last_error: _Optional[str] = ..., buffered_fire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., pending_fires: _Optional[int] = ..., next_fire_times: _Optional[_Iterable[_Union[_timestamp_pb2.Timestamp, _Mapping]]] = ..., last_fire_lag_ms: _Optional[int] = ...) -> None: ...

class ScheduleSpec(_message.Message):
    __slots__ = ["catchup_window_ms", "cron", "interval_ms", "overlap_policy", "time_zone"]
    CATCHUP_WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    CRON_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_POLICY_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    catchup_window_ms: int
    cron: str
    interval_ms: int
    overlap_policy: OverlapPolicy
    time_zone: str
    def __init__(self, cron: _Optional[str] = ..., interval_ms: _Optional[int] = ..., time_zone: _Optional[str] = ..., overlap_policy: _Optional[_Union[OverlapPolicy, str]] = ..., catchup_window_ms: _Optional[int] = ...) -> None: ...

class ScheduleSpecChange(_message.Message):
    __slots__ = ["catchup_window_ms", "cron", "interval_ms", "overlap_policy", "time_zone"]
    CATCHUP_WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    CRON_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_POLICY_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    catchup_window_ms: int
    cron: str
    interval_ms: int
    overlap_policy: OverlapPolicy
    time_zone: str
    def __init__(self, cron: _Optional[str] = ..., interval_ms: _Optional[int] = ..., time_zone: _Optional[str] = ..., overlap_policy: _Optional[_Union[OverlapPolicy, str]] = ..., catchup_window_ms: _Optional[int] = ...) -> None: ...

class TriggerScheduleRequest(_message.Message):
    __slots__ = ["request_id", "schedule_id"]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class TriggerScheduleResponse(_message.Message):
    __slots__ = ["run"]
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ...) -> None: ...

class UpdateScheduleRequest(_message.Message):
    __slots__ = ["definition", "input", "schedule_id", "spec"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    definition: _definition_pb2.WorkflowDefinition
    input: _struct_pb2.Value
    schedule_id: str
    spec: ScheduleSpecChange
    def __init__(self, schedule_id: _Optional[str] = ..., spec: _Optional[_Union[ScheduleSpecChange, _Mapping]] = ..., definition: _Optional[_Union[_definition_pb2.WorkflowDefinition, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class UpdateScheduleResponse(_message.Message):
    __slots__ = ["schedule"]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class OverlapPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
