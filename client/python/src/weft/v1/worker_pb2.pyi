from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import common_pb2 as _common_pb2
from weft.v1 import event_pb2 as _event_pb2
from weft.v1 import search_pb2 as _search_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
TASK_TYPE_ACTIVITY: TaskType
TASK_TYPE_COMPENSATION: TaskType
TASK_TYPE_UNSPECIFIED: TaskType
TASK_TYPE_VERIFY: TaskType

class ActivityRegistration(_message.Message):
    __slots__ = ["name", "verifiable"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERIFIABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    verifiable: bool
    def __init__(self, name: _Optional[str] = ..., verifiable: bool = ...) -> None: ...

class CompleteTaskRequest(_message.Message):
    __slots__ = ["artifacts", "next_tasks", "output", "reconciliation_key", "search_attributes", "task_token", "worker_id"]
    class SearchAttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _search_pb2.SearchAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_search_pb2.SearchAttributeValue, _Mapping]] = ...) -> None: ...
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_TASKS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RECONCILIATION_KEY_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    TASK_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.ArtifactRef]
    next_tasks: PollTasksRequest
    output: _struct_pb2.Value
    reconciliation_key: str
    search_attributes: _containers.MessageMap[str, _search_pb2.SearchAttributeValue]
    task_token: str
    worker_id: str
    def __init__(self, task_token: _Optional[str] = ..., worker_id: _Optional[str] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.ArtifactRef, _Mapping]]] = ..., reconciliation_key: _Optional[str] = ..., next_tasks: _Optional[_Union[PollTasksRequest, _Mapping]] = ..., search_attributes: _Optional[_Mapping[str, _search_pb2.SearchAttributeValue]] = ...) -> None: ...

class CompleteTaskResponse(_message.Message):
    __slots__ = ["duplicate", "tasks"]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    tasks: _containers.RepeatedCompositeFieldContainer[Task]
    def __init__(self, duplicate: bool = ..., tasks: _Optional[_Iterable[_Union[Task, _Mapping]]] = ...) -> None: ...

class DescribeQueueRequest(_message.Message):
    __slots__ = ["queue"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    def __init__(self, queue: _Optional[str] = ...) -> None: ...

class DescribeQueueResponse(_message.Message):
    __slots__ = ["queue"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: QueueDescription
    def __init__(self, queue: _Optional[_Union[QueueDescription, _Mapping]] = ...) -> None: ...

class FailTaskRequest(_message.Message):
    __slots__ = ["code", "error_class", "message", "reconciliation_key", "retry_after_ms", "side_effect_possible", "task_token", "worker_id"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RECONCILIATION_KEY_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_POSSIBLE_FIELD_NUMBER: _ClassVar[int]
    TASK_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    code: str
    error_class: _common_pb2.ErrorClass
    message: str
    reconciliation_key: str
    retry_after_ms: int
    side_effect_possible: bool
    task_token: str
    worker_id: str
    def __init__(self, task_token: _Optional[str] = ..., worker_id: _Optional[str] = ..., error_class: _Optional[_Union[_common_pb2.ErrorClass, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., side_effect_possible: bool = ..., reconciliation_key: _Optional[str] = ..., retry_after_ms: _Optional[int] = ...) -> None: ...

class FailTaskResponse(_message.Message):
    __slots__ = ["duplicate", "will_retry"]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    WILL_RETRY_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    will_retry: bool
    def __init__(self, duplicate: bool = ..., will_retry: bool = ...) -> None: ...

class FairnessKeyState(_message.Message):
    __slots__ = ["backlog", "key", "priority", "weight"]
    BACKLOG_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    backlog: int
    key: str
    priority: int
    weight: float
    def __init__(self, priority: _Optional[int] = ..., key: _Optional[str] = ..., backlog: _Optional[int] = ..., weight: _Optional[float] = ...) -> None: ...

class FlowKeyState(_message.Message):
    __slots__ = ["burst", "in_use", "key", "kind", "limit", "next_release", "rate", "scope", "tokens", "waiting"]
    BURST_FIELD_NUMBER: _ClassVar[int]
    IN_USE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    NEXT_RELEASE_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    burst: int
    in_use: int
    key: str
    kind: str
    limit: int
    next_release: _timestamp_pb2.Timestamp
    rate: str
    scope: str
    tokens: int
    waiting: int
    def __init__(self, kind: _Optional[str] = ..., scope: _Optional[str] = ..., key: _Optional[str] = ..., waiting: _Optional[int] = ..., in_use: _Optional[int] = ..., limit: _Optional[int] = ..., rate: _Optional[str] = ..., burst: _Optional[int] = ..., tokens: _Optional[int] = ..., next_release: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class HeartbeatTaskRequest(_message.Message):
    __slots__ = ["details", "task_token", "worker_id"]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    TASK_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    details: _struct_pb2.Value
    task_token: str
    worker_id: str
    def __init__(self, task_token: _Optional[str] = ..., worker_id: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class HeartbeatTaskResponse(_message.Message):
    __slots__ = ["cancel_requested", "deadline"]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    cancel_requested: bool
    deadline: _timestamp_pb2.Timestamp
    def __init__(self, cancel_requested: bool = ..., deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListWorkersRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListWorkersResponse(_message.Message):
    __slots__ = ["queues"]
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    queues: _containers.RepeatedCompositeFieldContainer[QueueDescription]
    def __init__(self, queues: _Optional[_Iterable[_Union[QueueDescription, _Mapping]]] = ...) -> None: ...

class PollTasksRequest(_message.Message):
    __slots__ = ["activities", "compensations", "max_tasks", "queue", "wait_ms", "worker_id"]
    ACTIVITIES_FIELD_NUMBER: _ClassVar[int]
    COMPENSATIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_TASKS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    activities: _containers.RepeatedCompositeFieldContainer[ActivityRegistration]
    compensations: _containers.RepeatedScalarFieldContainer[str]
    max_tasks: int
    queue: str
    wait_ms: int
    worker_id: str
    def __init__(self, worker_id: _Optional[str] = ..., queue: _Optional[str] = ..., activities: _Optional[_Iterable[_Union[ActivityRegistration, _Mapping]]] = ..., compensations: _Optional[_Iterable[str]] = ..., max_tasks: _Optional[int] = ..., wait_ms: _Optional[int] = ...) -> None: ...

class PollTasksResponse(_message.Message):
    __slots__ = ["tasks"]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[Task]
    def __init__(self, tasks: _Optional[_Iterable[_Union[Task, _Mapping]]] = ...) -> None: ...

class Poller(_message.Message):
    __slots__ = ["activities", "compensations", "in_flight_tasks", "last_poll_at", "polling", "verifiable_activities", "worker_id"]
    ACTIVITIES_FIELD_NUMBER: _ClassVar[int]
    COMPENSATIONS_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_TASKS_FIELD_NUMBER: _ClassVar[int]
    LAST_POLL_AT_FIELD_NUMBER: _ClassVar[int]
    POLLING_FIELD_NUMBER: _ClassVar[int]
    VERIFIABLE_ACTIVITIES_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    activities: _containers.RepeatedScalarFieldContainer[str]
    compensations: _containers.RepeatedScalarFieldContainer[str]
    in_flight_tasks: int
    last_poll_at: _timestamp_pb2.Timestamp
    polling: bool
    verifiable_activities: _containers.RepeatedScalarFieldContainer[str]
    worker_id: str
    def __init__(self, worker_id: _Optional[str] = ..., last_poll_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., polling: bool = ..., in_flight_tasks: _Optional[int] = ..., activities: _Optional[_Iterable[str]] = ..., compensations: _Optional[_Iterable[str]] = ..., verifiable_activities: _Optional[_Iterable[str]] = ...) -> None: ...

class QueueDescription(_message.Message):
    __slots__ = ["backlog", "backlog_capped", "fairness_keys", "fairness_other", "flow_keys", "oldest_ready_age_ms", "oldest_ready_at", "pollers", "queue"]
    BACKLOG_CAPPED_FIELD_NUMBER: _ClassVar[int]
    BACKLOG_FIELD_NUMBER: _ClassVar[int]
    FAIRNESS_KEYS_FIELD_NUMBER: _ClassVar[int]
    FAIRNESS_OTHER_FIELD_NUMBER: _ClassVar[int]
    FLOW_KEYS_FIELD_NUMBER: _ClassVar[int]
    OLDEST_READY_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    OLDEST_READY_AT_FIELD_NUMBER: _ClassVar[int]
    POLLERS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    backlog: int
    backlog_capped: bool
    fairness_keys: _containers.RepeatedCompositeFieldContainer[FairnessKeyState]
    fairness_other: int
    flow_keys: _containers.RepeatedCompositeFieldContainer[FlowKeyState]
    oldest_ready_age_ms: int
    oldest_ready_at: _timestamp_pb2.Timestamp
    pollers: _containers.RepeatedCompositeFieldContainer[Poller]
    queue: str
    def __init__(self, queue: _Optional[str] = ..., backlog: _Optional[int] = ..., backlog_capped: bool = ..., oldest_ready_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., oldest_ready_age_ms: _Optional[int] = ..., pollers: _Optional[_Iterable[_Union[Poller, _Mapping]]] = ..., flow_keys: _Optional[_Iterable[_Union[FlowKeyState, _Mapping]]] = ..., fairness_keys: _Optional[_Iterable[_Union[FairnessKeyState, _Mapping]]] = ..., fairness_other: _Optional[int] = ...) -> None: ...

class ReportVerificationRequest(_message.Message):
    __slots__ = ["diagnostic", "result", "state", "task_token", "worker_id"]
    DIAGNOSTIC_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TASK_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    diagnostic: str
    result: _struct_pb2.Value
    state: _event_pb2.VerifyState
    task_token: str
    worker_id: str
    def __init__(self, task_token: _Optional[str] = ..., worker_id: _Optional[str] = ..., state: _Optional[_Union[_event_pb2.VerifyState, str]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., diagnostic: _Optional[str] = ...) -> None: ...

class ReportVerificationResponse(_message.Message):
    __slots__ = ["duplicate"]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    def __init__(self, duplicate: bool = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ["action_id", "activity", "deadline", "engine_attempt_id", "heartbeat_details", "heartbeat_timeout_ms", "idempotency_key", "index", "input", "item", "logical_attempt_id", "operation_id", "reconciliation_key", "run_id", "run_input", "secrets", "task_id", "task_token", "task_type", "tenant_id", "traceparent", "upstream_outputs"]
    class UpstreamOutputsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _struct_pb2.Value
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVITY_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_DETAILS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    LOGICAL_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    RECONCILIATION_KEY_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_INPUT_FIELD_NUMBER: _ClassVar[int]
    SECRETS_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TASK_TYPE_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    activity: str
    deadline: _timestamp_pb2.Timestamp
    engine_attempt_id: int
    heartbeat_details: _struct_pb2.Value
    heartbeat_timeout_ms: int
    idempotency_key: str
    index: int
    input: _struct_pb2.Value
    item: _struct_pb2.Value
    logical_attempt_id: int
    operation_id: str
    reconciliation_key: str
    run_id: str
    run_input: _struct_pb2.Value
    secrets: _containers.RepeatedCompositeFieldContainer[_common_pb2.SecretRef]
    task_id: str
    task_token: str
    task_type: TaskType
    tenant_id: str
    traceparent: str
    upstream_outputs: _containers.MessageMap[str, _struct_pb2.Value]
    def __init__(self, task_token: _Optional[str] = ..., task_type: _Optional[_Union[TaskType, str]] = ..., task_id: _Optional[str] = ..., run_id: _Optional[str] = ..., action_id: _Optional[str] = ..., activity: _Optional[str] = ..., operation_id: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., run_input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., upstream_outputs: _Optional[_Mapping[str, _struct_pb2.Value]] = ..., idempotency_key: _Optional[str] = ..., logical_attempt_id: _Optional[int] = ..., engine_attempt_id: _Optional[int] = ..., deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., heartbeat_timeout_ms: _Optional[int] = ..., secrets: _Optional[_Iterable[_Union[_common_pb2.SecretRef, _Mapping]]] = ..., reconciliation_key: _Optional[str] = ..., tenant_id: _Optional[str] = ..., traceparent: _Optional[str] = ..., heartbeat_details: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., item: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., index: _Optional[int] = ...) -> None: ...

class TaskType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
