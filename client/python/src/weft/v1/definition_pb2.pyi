from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

BACKOFF_STRATEGY_CONSTANT: BackoffStrategy
BACKOFF_STRATEGY_EXPONENTIAL: BackoffStrategy
BACKOFF_STRATEGY_LINEAR: BackoffStrategy
BACKOFF_STRATEGY_UNSPECIFIED: BackoffStrategy
BACKPRESSURE_MODE_DELAY: BackpressureMode
BACKPRESSURE_MODE_QUEUE: BackpressureMode
BACKPRESSURE_MODE_REJECT: BackpressureMode
BACKPRESSURE_MODE_UNSPECIFIED: BackpressureMode
COMPLETION_MODE_AUTOMATED: CompletionMode
COMPLETION_MODE_MANUAL: CompletionMode
COMPLETION_MODE_UNSPECIFIED: CompletionMode
CONCURRENCY_STRATEGY_CANCEL_IN_PROGRESS: ConcurrencyStrategy
CONCURRENCY_STRATEGY_CANCEL_NEWEST: ConcurrencyStrategy
CONCURRENCY_STRATEGY_QUEUE: ConcurrencyStrategy
CONCURRENCY_STRATEGY_UNSPECIFIED: ConcurrencyStrategy
DESCRIPTOR: _descriptor.FileDescriptor
ON_FAILURE_ABORT: OnFailure
ON_FAILURE_COMPENSATE: OnFailure
ON_FAILURE_HOLD: OnFailure
ON_FAILURE_SKIP: OnFailure
ON_FAILURE_UNSPECIFIED: OnFailure
PARENT_CLOSE_ABANDON: ParentClose
PARENT_CLOSE_CANCEL: ParentClose
PARENT_CLOSE_UNSPECIFIED: ParentClose

class Action(_message.Message):
    __slots__ = ["activity", "compensation", "completion_mode", "concurrency", "depends_on", "fairness", "for_each", "heartbeat_timeout_ms", "id", "input", "manual_timeout_ms", "max_concurrency", "on_failure", "order", "parent_close", "queue", "repeat", "retry", "schedule_to_start_timeout_ms", "secrets", "sleep_ms", "sleep_until", "throttle", "timeout_ms", "wait_for_signal", "when", "workflow"]
    ACTIVITY_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_MODE_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    FAIRNESS_FIELD_NUMBER: _ClassVar[int]
    FOR_EACH_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    MANUAL_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    ON_FAILURE_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    PARENT_CLOSE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_TO_START_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SECRETS_FIELD_NUMBER: _ClassVar[int]
    SLEEP_MS_FIELD_NUMBER: _ClassVar[int]
    SLEEP_UNTIL_FIELD_NUMBER: _ClassVar[int]
    THROTTLE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    WHEN_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    activity: str
    compensation: CompensationHook
    completion_mode: CompletionMode
    concurrency: StepConcurrency
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    fairness: Fairness
    for_each: str
    heartbeat_timeout_ms: int
    id: str
    input: _struct_pb2.Value
    manual_timeout_ms: int
    max_concurrency: int
    on_failure: OnFailure
    order: int
    parent_close: ParentClose
    queue: str
    repeat: StepRepeat
    retry: RetryPolicy
    schedule_to_start_timeout_ms: int
    secrets: _containers.RepeatedCompositeFieldContainer[_common_pb2.SecretRef]
    sleep_ms: int
    sleep_until: str
    throttle: StepThrottle
    timeout_ms: int
    wait_for_signal: WaitForSignal
    when: str
    workflow: SubWorkflow
    def __init__(self, id: _Optional[str] = ..., order: _Optional[int] = ..., activity: _Optional[str] = ..., queue: _Optional[str] = ..., depends_on: _Optional[_Iterable[str]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., retry: _Optional[_Union[RetryPolicy, _Mapping]] = ..., timeout_ms: _Optional[int] = ..., heartbeat_timeout_ms: _Optional[int] = ..., on_failure: _Optional[_Union[OnFailure, str]] = ..., completion_mode: _Optional[_Union[CompletionMode, str]] = ..., wait_for_signal: _Optional[_Union[WaitForSignal, _Mapping]] = ..., manual_timeout_ms: _Optional[int] = ..., compensation: _Optional[_Union[CompensationHook, _Mapping]] = ..., secrets: _Optional[_Iterable[_Union[_common_pb2.SecretRef, _Mapping]]] = ..., schedule_to_start_timeout_ms: _Optional[int] = ..., when: _Optional[str] = ..., repeat: _Optional[_Union[StepRepeat, _Mapping]] = ..., sleep_ms: _Optional[int] = ..., sleep_until: _Optional[str] = ..., concurrency: _Optional[_Union[StepConcurrency, _Mapping]] = ..., throttle: _Optional[_Union[StepThrottle, _Mapping]] = ..., workflow: _Optional[_Union[SubWorkflow, _Mapping]] = ..., parent_close: _Optional[_Union[ParentClose, str]] = ..., for_each: _Optional[str] = ..., max_concurrency: _Optional[int] = ..., fairness: _Optional[_Union[Fairness, _Mapping]] = ...) -> None: ...

class CompensationHook(_message.Message):
    __slots__ = ["input", "operation", "queue", "retry", "timeout_ms"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    input: _struct_pb2.Value
    operation: str
    queue: str
    retry: RetryPolicy
    timeout_ms: int
    def __init__(self, operation: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., timeout_ms: _Optional[int] = ..., retry: _Optional[_Union[RetryPolicy, _Mapping]] = ..., queue: _Optional[str] = ...) -> None: ...

class DefinitionRef(_message.Message):
    __slots__ = ["plan_id", "plan_version"]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    plan_id: str
    plan_version: str
    def __init__(self, plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ...) -> None: ...

class DefinitionVersion(_message.Message):
    __slots__ = ["action_count", "created_at", "created_by", "display_name", "latest", "plan_id", "plan_sha256", "plan_version"]
    ACTION_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    LATEST_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_SHA256_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    action_count: int
    created_at: _timestamp_pb2.Timestamp
    created_by: str
    display_name: str
    latest: bool
    plan_id: str
    plan_sha256: str
    plan_version: str
    def __init__(self, plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ..., display_name: _Optional[str] = ..., plan_sha256: _Optional[str] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., action_count: _Optional[int] = ..., latest: bool = ...) -> None: ...

class Fairness(_message.Message):
    __slots__ = ["key", "weight"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    key: str
    weight: str
    def __init__(self, key: _Optional[str] = ..., weight: _Optional[str] = ...) -> None: ...

class GetDefinitionRequest(_message.Message):
    __slots__ = ["ref"]
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: DefinitionRef
    def __init__(self, ref: _Optional[_Union[DefinitionRef, _Mapping]] = ...) -> None: ...

class GetDefinitionResponse(_message.Message):
    __slots__ = ["definition", "version"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    definition: WorkflowDefinition
    version: DefinitionVersion
    def __init__(self, version: _Optional[_Union[DefinitionVersion, _Mapping]] = ..., definition: _Optional[_Union[WorkflowDefinition, _Mapping]] = ...) -> None: ...

class ListDefinitionsRequest(_message.Message):
    __slots__ = ["page_size", "page_token", "plan_id"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    plan_id: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., plan_id: _Optional[str] = ...) -> None: ...

class ListDefinitionsResponse(_message.Message):
    __slots__ = ["next_page_token", "versions"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    versions: _containers.RepeatedCompositeFieldContainer[DefinitionVersion]
    def __init__(self, versions: _Optional[_Iterable[_Union[DefinitionVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ParseDefinitionRequest(_message.Message):
    __slots__ = ["yaml"]
    YAML_FIELD_NUMBER: _ClassVar[int]
    yaml: str
    def __init__(self, yaml: _Optional[str] = ...) -> None: ...

class ParseDefinitionResponse(_message.Message):
    __slots__ = ["definition"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    definition: WorkflowDefinition
    def __init__(self, definition: _Optional[_Union[WorkflowDefinition, _Mapping]] = ...) -> None: ...

class PutDefinitionRequest(_message.Message):
    __slots__ = ["definition"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    definition: WorkflowDefinition
    def __init__(self, definition: _Optional[_Union[WorkflowDefinition, _Mapping]] = ...) -> None: ...

class PutDefinitionResponse(_message.Message):
    __slots__ = ["definition", "existing", "version"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    definition: WorkflowDefinition
    existing: bool
    version: DefinitionVersion
    def __init__(self, version: _Optional[_Union[DefinitionVersion, _Mapping]] = ..., definition: _Optional[_Union[WorkflowDefinition, _Mapping]] = ..., existing: bool = ...) -> None: ...

class RetryPolicy(_message.Message):
    __slots__ = ["backoff_multiplier", "initial_backoff_ms", "max_attempts", "max_backoff_ms", "retryable_errors", "strategy"]
    BACKOFF_MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    INITIAL_BACKOFF_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    MAX_BACKOFF_MS_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_ERRORS_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    backoff_multiplier: float
    initial_backoff_ms: int
    max_attempts: int
    max_backoff_ms: int
    retryable_errors: _containers.RepeatedScalarFieldContainer[_common_pb2.ErrorClass]
    strategy: BackoffStrategy
    def __init__(self, max_attempts: _Optional[int] = ..., strategy: _Optional[_Union[BackoffStrategy, str]] = ..., initial_backoff_ms: _Optional[int] = ..., backoff_multiplier: _Optional[float] = ..., max_backoff_ms: _Optional[int] = ..., retryable_errors: _Optional[_Iterable[_Union[_common_pb2.ErrorClass, str]]] = ...) -> None: ...

class RunConcurrency(_message.Message):
    __slots__ = ["key", "limit", "strategy"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    key: str
    limit: int
    strategy: ConcurrencyStrategy
    def __init__(self, key: _Optional[str] = ..., limit: _Optional[int] = ..., strategy: _Optional[_Union[ConcurrencyStrategy, str]] = ...) -> None: ...

class StepConcurrency(_message.Message):
    __slots__ = ["key", "limit", "scope"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    key: str
    limit: int
    scope: str
    def __init__(self, key: _Optional[str] = ..., limit: _Optional[int] = ..., scope: _Optional[str] = ...) -> None: ...

class StepRepeat(_message.Message):
    __slots__ = ["max_iterations", "until"]
    MAX_ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    max_iterations: int
    until: str
    def __init__(self, until: _Optional[str] = ..., max_iterations: _Optional[int] = ...) -> None: ...

class StepThrottle(_message.Message):
    __slots__ = ["burst", "key", "rate", "scope"]
    BURST_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    burst: int
    key: str
    rate: str
    scope: str
    def __init__(self, key: _Optional[str] = ..., rate: _Optional[str] = ..., burst: _Optional[int] = ..., scope: _Optional[str] = ...) -> None: ...

class SubWorkflow(_message.Message):
    __slots__ = ["definition", "input", "plan_id", "plan_version"]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    definition: WorkflowDefinition
    input: _struct_pb2.Value
    plan_id: str
    plan_version: str
    def __init__(self, plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ..., definition: _Optional[_Union[WorkflowDefinition, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class WaitForSignal(_message.Message):
    __slots__ = ["signal_name", "timeout_ms"]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    signal_name: str
    timeout_ms: int
    def __init__(self, signal_name: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class WorkflowDefinition(_message.Message):
    __slots__ = ["actions", "backpressure", "concurrency", "dag", "display_name", "fairness", "max_concurrent_runs", "plan_id", "plan_version", "priority", "requires_approval", "result_action_id", "retention_ms", "search_attributes", "timeout_ms"]
    class SearchAttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    BACKPRESSURE_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    DAG_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    FAIRNESS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_RUNS_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_APPROVAL_FIELD_NUMBER: _ClassVar[int]
    RESULT_ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RETENTION_MS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    backpressure: BackpressureMode
    concurrency: RunConcurrency
    dag: bool
    display_name: str
    fairness: Fairness
    max_concurrent_runs: int
    plan_id: str
    plan_version: str
    priority: int
    requires_approval: bool
    result_action_id: str
    retention_ms: int
    search_attributes: _containers.ScalarMap[str, str]
    timeout_ms: int
    def __init__(self, plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ..., actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., timeout_ms: _Optional[int] = ..., backpressure: _Optional[_Union[BackpressureMode, str]] = ..., max_concurrent_runs: _Optional[int] = ..., requires_approval: bool = ..., display_name: _Optional[str] = ..., dag: bool = ..., result_action_id: _Optional[str] = ..., retention_ms: _Optional[int] = ..., search_attributes: _Optional[_Mapping[str, str]] = ..., priority: _Optional[int] = ..., fairness: _Optional[_Union[Fairness, _Mapping]] = ..., concurrency: _Optional[_Union[RunConcurrency, _Mapping]] = ...) -> None: ...

class ConcurrencyStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ParentClose(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BackoffStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class OnFailure(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CompletionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BackpressureMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
