from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import common_pb2 as _common_pb2
from weft.v1 import definition_pb2 as _definition_pb2
from weft.v1 import search_pb2 as _search_pb2
from weft.v1 import signal_pb2 as _signal_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

ATTEMPT_OUTCOME_CANCELLED: AttemptOutcome
ATTEMPT_OUTCOME_FAILED: AttemptOutcome
ATTEMPT_OUTCOME_RECONCILED: AttemptOutcome
ATTEMPT_OUTCOME_SUCCEEDED: AttemptOutcome
ATTEMPT_OUTCOME_TIMED_OUT: AttemptOutcome
ATTEMPT_OUTCOME_UNSPECIFIED: AttemptOutcome
BATCH_OPERATION_CANCEL: BatchOperation
BATCH_OPERATION_DELETE: BatchOperation
BATCH_OPERATION_PAUSE: BatchOperation
BATCH_OPERATION_RERUN_FROM: BatchOperation
BATCH_OPERATION_RESUME: BatchOperation
BATCH_OPERATION_RETRY_STEP: BatchOperation
BATCH_OPERATION_SIGNAL: BatchOperation
BATCH_OPERATION_UNSPECIFIED: BatchOperation
BATCH_RUN_OUTCOME_FAILED: BatchRunOutcome
BATCH_RUN_OUTCOME_SKIPPED: BatchRunOutcome
BATCH_RUN_OUTCOME_SUCCEEDED: BatchRunOutcome
BATCH_RUN_OUTCOME_UNSPECIFIED: BatchRunOutcome
BATCH_STATE_CANCELLED: BatchState
BATCH_STATE_COMPLETED: BatchState
BATCH_STATE_RUNNING: BatchState
BATCH_STATE_UNSPECIFIED: BatchState
COMPENSATION_OUTCOME_PARTIAL: CompensationOutcome
COMPENSATION_OUTCOME_ROLLED_BACK: CompensationOutcome
COMPENSATION_OUTCOME_UNSPECIFIED: CompensationOutcome
COMPENSATION_STATUS_FAILED: CompensationStatus
COMPENSATION_STATUS_PENDING: CompensationStatus
COMPENSATION_STATUS_RUNNING: CompensationStatus
COMPENSATION_STATUS_SUCCEEDED: CompensationStatus
COMPENSATION_STATUS_UNSPECIFIED: CompensationStatus
DESCRIPTOR: _descriptor.FileDescriptor
RUN_STATUS_APPROVED: RunStatus
RUN_STATUS_BLOCKED: RunStatus
RUN_STATUS_CANCELLED: RunStatus
RUN_STATUS_COMPENSATING: RunStatus
RUN_STATUS_COMPLETED: RunStatus
RUN_STATUS_FAILED: RunStatus
RUN_STATUS_PAUSED: RunStatus
RUN_STATUS_PENDING: RunStatus
RUN_STATUS_QUEUED: RunStatus
RUN_STATUS_RUNNING: RunStatus
RUN_STATUS_UNSPECIFIED: RunStatus
RUN_SUBSTATUS_DRAINING: RunSubstatus
RUN_SUBSTATUS_UNSPECIFIED: RunSubstatus
STEP_STATUS_CANCELLED: StepStatus
STEP_STATUS_FAILED: StepStatus
STEP_STATUS_PENDING: StepStatus
STEP_STATUS_RUNNING: StepStatus
STEP_STATUS_SCHEDULED: StepStatus
STEP_STATUS_SKIPPED: StepStatus
STEP_STATUS_SUCCEEDED: StepStatus
STEP_STATUS_UNSPECIFIED: StepStatus
STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION: StepStatus
STEP_STATUS_WAITING_FOR_SIGNAL: StepStatus

class ApproveRunRequest(_message.Message):
    __slots__ = ["reason", "run_id", "signal_id"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ApproveRunResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class Attempt(_message.Message):
    __slots__ = ["completed_at", "engine_attempt_id", "error", "logical_attempt_id", "outcome", "started_at", "worker_id"]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    ENGINE_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LOGICAL_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    completed_at: _timestamp_pb2.Timestamp
    engine_attempt_id: int
    error: StepError
    logical_attempt_id: int
    outcome: AttemptOutcome
    started_at: _timestamp_pb2.Timestamp
    worker_id: str
    def __init__(self, logical_attempt_id: _Optional[int] = ..., engine_attempt_id: _Optional[int] = ..., outcome: _Optional[_Union[AttemptOutcome, str]] = ..., error: _Optional[_Union[StepError, _Mapping]] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., worker_id: _Optional[str] = ...) -> None: ...

class AwaitRunRequest(_message.Message):
    __slots__ = ["run_id", "wait_ms"]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    wait_ms: int
    def __init__(self, run_id: _Optional[str] = ..., wait_ms: _Optional[int] = ...) -> None: ...

class AwaitRunResponse(_message.Message):
    __slots__ = ["run"]
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: Run
    def __init__(self, run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class Batch(_message.Message):
    __slots__ = ["action_id", "batch_id", "created_at", "created_by", "done", "ended_at", "failed", "from_step", "operation", "owner", "query", "rate", "signal_name", "skipped", "state", "succeeded", "total"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    FROM_STEP_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    batch_id: str
    created_at: _timestamp_pb2.Timestamp
    created_by: str
    done: int
    ended_at: _timestamp_pb2.Timestamp
    failed: int
    from_step: str
    operation: BatchOperation
    owner: str
    query: str
    rate: float
    signal_name: str
    skipped: int
    state: BatchState
    succeeded: int
    total: int
    def __init__(self, batch_id: _Optional[str] = ..., operation: _Optional[_Union[BatchOperation, str]] = ..., state: _Optional[_Union[BatchState, str]] = ..., query: _Optional[str] = ..., rate: _Optional[float] = ..., total: _Optional[int] = ..., done: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., skipped: _Optional[int] = ..., from_step: _Optional[str] = ..., action_id: _Optional[str] = ..., signal_name: _Optional[str] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., owner: _Optional[str] = ...) -> None: ...

class BatchRun(_message.Message):
    __slots__ = ["at", "code", "message", "outcome", "run_id"]
    AT_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    code: str
    message: str
    outcome: BatchRunOutcome
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., outcome: _Optional[_Union[BatchRunOutcome, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CancelBatchRequest(_message.Message):
    __slots__ = ["batch_id"]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    batch_id: str
    def __init__(self, batch_id: _Optional[str] = ...) -> None: ...

class CancelBatchResponse(_message.Message):
    __slots__ = ["batch"]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    batch: Batch
    def __init__(self, batch: _Optional[_Union[Batch, _Mapping]] = ...) -> None: ...

class CancelRunRequest(_message.Message):
    __slots__ = ["compensate", "reason", "run_id", "signal_id"]
    COMPENSATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    compensate: bool
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ..., compensate: bool = ...) -> None: ...

class CancelRunResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class Cancellation(_message.Message):
    __slots__ = ["cancelled_by", "compensate", "reason", "requested_at"]
    CANCELLED_BY_FIELD_NUMBER: _ClassVar[int]
    COMPENSATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    cancelled_by: str
    compensate: bool
    reason: str
    requested_at: _timestamp_pb2.Timestamp
    def __init__(self, cancelled_by: _Optional[str] = ..., reason: _Optional[str] = ..., requested_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., compensate: bool = ...) -> None: ...

class DeleteRunRequest(_message.Message):
    __slots__ = ["run_id"]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class DeleteRunResponse(_message.Message):
    __slots__ = ["removed", "run_id"]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., removed: bool = ...) -> None: ...

class DescribeBatchRequest(_message.Message):
    __slots__ = ["batch_id", "page_size", "page_token"]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    batch_id: str
    page_size: int
    page_token: str
    def __init__(self, batch_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class DescribeBatchResponse(_message.Message):
    __slots__ = ["batch", "next_page_token", "runs"]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    batch: Batch
    next_page_token: str
    runs: _containers.RepeatedCompositeFieldContainer[BatchRun]
    def __init__(self, batch: _Optional[_Union[Batch, _Mapping]] = ..., runs: _Optional[_Iterable[_Union[BatchRun, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DescribeRunConcurrencyRequest(_message.Message):
    __slots__ = ["plan_id"]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    plan_id: str
    def __init__(self, plan_id: _Optional[str] = ...) -> None: ...

class DescribeRunConcurrencyResponse(_message.Message):
    __slots__ = ["keys"]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[RunConcurrencyKey]
    def __init__(self, keys: _Optional[_Iterable[_Union[RunConcurrencyKey, _Mapping]]] = ...) -> None: ...

class FanOutProgress(_message.Message):
    __slots__ = ["cancelled", "failed", "in_flight", "items", "max_concurrency", "pending", "succeeded"]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    cancelled: int
    failed: int
    in_flight: int
    items: int
    max_concurrency: int
    pending: int
    succeeded: int
    def __init__(self, items: _Optional[int] = ..., max_concurrency: _Optional[int] = ..., pending: _Optional[int] = ..., in_flight: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., cancelled: _Optional[int] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ["run_id"]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ["run"]
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: Run
    def __init__(self, run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class ListBatchesRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListBatchesResponse(_message.Message):
    __slots__ = ["batches", "next_page_token"]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    batches: _containers.RepeatedCompositeFieldContainer[Batch]
    next_page_token: str
    def __init__(self, batches: _Optional[_Iterable[_Union[Batch, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ["created_after", "created_before", "environment_id", "page_size", "page_token", "plan_id", "plan_version", "project_id", "query", "run_id_contains", "statuses"]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_CONTAINS_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    environment_id: str
    page_size: int
    page_token: str
    plan_id: str
    plan_version: str
    project_id: str
    query: str
    run_id_contains: str
    statuses: _containers.RepeatedScalarFieldContainer[RunStatus]
    def __init__(self, statuses: _Optional[_Iterable[_Union[RunStatus, str]]] = ..., plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ..., created_after: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ..., run_id_contains: _Optional[str] = ..., query: _Optional[str] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ["next_page_token", "runs"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    runs: _containers.RepeatedCompositeFieldContainer[Run]
    def __init__(self, runs: _Optional[_Iterable[_Union[Run, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PauseRunRequest(_message.Message):
    __slots__ = ["reason", "run_id", "signal_id"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class PauseRunResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class RerunRunRequest(_message.Message):
    __slots__ = ["from_step", "reason", "run_id", "signal_id"]
    FROM_STEP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    from_step: str
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., from_step: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RerunRunResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class ResumeRunRequest(_message.Message):
    __slots__ = ["reason", "run_id", "signal_id"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ResumeRunResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class RetryStepRequest(_message.Message):
    __slots__ = ["action_id", "reason", "run_id", "signal_id"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., action_id: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RetryStepResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ["artifacts", "cancellation", "compensation_outcome", "completed_at", "concurrency", "created_at", "deadline", "definition", "environment_id", "error", "failed_steps", "input", "last_event_seq", "message", "parent_run_id", "parent_step", "plan_id", "plan_version", "priority", "project_id", "result", "retain_until", "run_id", "run_request_id", "search_attributes", "started_at", "status", "steps", "submitted_by", "substatus", "tenant_id", "total_duration_ms", "trigger_source"]
    class SearchAttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _search_pb2.SearchAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_search_pb2.SearchAttributeValue, _Mapping]] = ...) -> None: ...
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    CANCELLATION_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FAILED_STEPS_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_STEP_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RETAIN_UNTIL_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_BY_FIELD_NUMBER: _ClassVar[int]
    SUBSTATUS_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_SOURCE_FIELD_NUMBER: _ClassVar[int]
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.ArtifactRef]
    cancellation: Cancellation
    compensation_outcome: CompensationOutcome
    completed_at: _timestamp_pb2.Timestamp
    concurrency: RunKeyConcurrency
    created_at: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    definition: _definition_pb2.WorkflowDefinition
    environment_id: str
    error: RunError
    failed_steps: int
    input: _struct_pb2.Value
    last_event_seq: int
    message: str
    parent_run_id: str
    parent_step: str
    plan_id: str
    plan_version: str
    priority: int
    project_id: str
    result: _struct_pb2.Value
    retain_until: _timestamp_pb2.Timestamp
    run_id: str
    run_request_id: str
    search_attributes: _containers.MessageMap[str, _search_pb2.SearchAttributeValue]
    started_at: _timestamp_pb2.Timestamp
    status: RunStatus
    steps: _containers.RepeatedCompositeFieldContainer[Step]
    submitted_by: str
    substatus: RunSubstatus
    tenant_id: str
    total_duration_ms: int
    trigger_source: str
    def __init__(self, run_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ..., plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ..., run_request_id: _Optional[str] = ..., status: _Optional[_Union[RunStatus, str]] = ..., substatus: _Optional[_Union[RunSubstatus, str]] = ..., message: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[Step, _Mapping]]] = ..., compensation_outcome: _Optional[_Union[CompensationOutcome, str]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., total_duration_ms: _Optional[int] = ..., last_event_seq: _Optional[int] = ..., error: _Optional[_Union[RunError, _Mapping]] = ..., cancellation: _Optional[_Union[Cancellation, _Mapping]] = ..., submitted_by: _Optional[str] = ..., definition: _Optional[_Union[_definition_pb2.WorkflowDefinition, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.ArtifactRef, _Mapping]]] = ..., deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., failed_steps: _Optional[int] = ..., trigger_source: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., retain_until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., search_attributes: _Optional[_Mapping[str, _search_pb2.SearchAttributeValue]] = ..., parent_run_id: _Optional[str] = ..., parent_step: _Optional[str] = ..., priority: _Optional[int] = ..., concurrency: _Optional[_Union[RunKeyConcurrency, _Mapping]] = ...) -> None: ...

class RunConcurrencyKey(_message.Message):
    __slots__ = ["in_use", "key", "limit", "plan_id", "waiting"]
    IN_USE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    in_use: int
    key: str
    limit: int
    plan_id: str
    waiting: int
    def __init__(self, plan_id: _Optional[str] = ..., key: _Optional[str] = ..., in_use: _Optional[int] = ..., limit: _Optional[int] = ..., waiting: _Optional[int] = ...) -> None: ...

class RunError(_message.Message):
    __slots__ = ["action_id", "error", "workflow_timeout"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    error: StepError
    workflow_timeout: bool
    def __init__(self, action_id: _Optional[str] = ..., error: _Optional[_Union[StepError, _Mapping]] = ..., workflow_timeout: bool = ...) -> None: ...

class RunKeyConcurrency(_message.Message):
    __slots__ = ["in_use", "key", "limit", "strategy", "wait"]
    IN_USE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    in_use: int
    key: str
    limit: int
    strategy: str
    wait: str
    def __init__(self, key: _Optional[str] = ..., limit: _Optional[int] = ..., strategy: _Optional[str] = ..., in_use: _Optional[int] = ..., wait: _Optional[str] = ...) -> None: ...

class SkipStepRequest(_message.Message):
    __slots__ = ["action_id", "reason", "run_id", "signal_id"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    reason: str
    run_id: str
    signal_id: str
    def __init__(self, run_id: _Optional[str] = ..., action_id: _Optional[str] = ..., signal_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class SkipStepResponse(_message.Message):
    __slots__ = ["result", "run"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.AcceptedSignalResult
    run: Run
    def __init__(self, result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class StartBatchRequest(_message.Message):
    __slots__ = ["action_id", "batch_id", "compensate", "from_step", "operation", "payload", "query", "rate", "reason", "run_ids", "signal_name"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    COMPENSATE_FIELD_NUMBER: _ClassVar[int]
    FROM_STEP_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_IDS_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    batch_id: str
    compensate: bool
    from_step: str
    operation: BatchOperation
    payload: _struct_pb2.Value
    query: str
    rate: float
    reason: str
    run_ids: _containers.RepeatedScalarFieldContainer[str]
    signal_name: str
    def __init__(self, batch_id: _Optional[str] = ..., run_ids: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., operation: _Optional[_Union[BatchOperation, str]] = ..., rate: _Optional[float] = ..., from_step: _Optional[str] = ..., action_id: _Optional[str] = ..., signal_name: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., reason: _Optional[str] = ..., compensate: bool = ...) -> None: ...

class StartBatchResponse(_message.Message):
    __slots__ = ["batch", "existing"]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    batch: Batch
    existing: bool
    def __init__(self, batch: _Optional[_Union[Batch, _Mapping]] = ..., existing: bool = ...) -> None: ...

class StartRunRequest(_message.Message):
    __slots__ = ["run_id"]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class StartRunResponse(_message.Message):
    __slots__ = ["run"]
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: Run
    def __init__(self, run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...

class Step(_message.Message):
    __slots__ = ["action_id", "artifacts", "attempts", "child_run_id", "compensation_error", "compensation_status", "completed_at", "completion_token", "engine_attempt_id", "error", "fan_out", "flow_wait", "idempotency_key", "input", "item_index", "iteration", "logical_attempt_id", "manual_completion", "next_attempt_at", "output", "parent_step", "reason", "scheduled_at", "started_at", "status", "waiting_for_signal", "wake_at"]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CHILD_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_ERROR_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_STATUS_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ENGINE_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FAN_OUT_FIELD_NUMBER: _ClassVar[int]
    FLOW_WAIT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    ITERATION_FIELD_NUMBER: _ClassVar[int]
    LOGICAL_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    MANUAL_COMPLETION_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PARENT_STEP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FOR_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    WAKE_AT_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.ArtifactRef]
    attempts: _containers.RepeatedCompositeFieldContainer[Attempt]
    child_run_id: str
    compensation_error: StepError
    compensation_status: CompensationStatus
    completed_at: _timestamp_pb2.Timestamp
    completion_token: str
    engine_attempt_id: int
    error: StepError
    fan_out: FanOutProgress
    flow_wait: str
    idempotency_key: str
    input: _struct_pb2.Value
    item_index: int
    iteration: int
    logical_attempt_id: int
    manual_completion: _signal_pb2.ManualCompletionResult
    next_attempt_at: _timestamp_pb2.Timestamp
    output: _struct_pb2.Value
    parent_step: str
    reason: str
    scheduled_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    status: StepStatus
    waiting_for_signal: str
    wake_at: _timestamp_pb2.Timestamp
    def __init__(self, action_id: _Optional[str] = ..., status: _Optional[_Union[StepStatus, str]] = ..., logical_attempt_id: _Optional[int] = ..., engine_attempt_id: _Optional[int] = ..., attempts: _Optional[_Iterable[_Union[Attempt, _Mapping]]] = ..., scheduled_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.ArtifactRef, _Mapping]]] = ..., error: _Optional[_Union[StepError, _Mapping]] = ..., completion_token: _Optional[str] = ..., compensation_status: _Optional[_Union[CompensationStatus, str]] = ..., compensation_error: _Optional[_Union[StepError, _Mapping]] = ..., idempotency_key: _Optional[str] = ..., next_attempt_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ..., waiting_for_signal: _Optional[str] = ..., manual_completion: _Optional[_Union[_signal_pb2.ManualCompletionResult, _Mapping]] = ..., wake_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., iteration: _Optional[int] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., flow_wait: _Optional[str] = ..., child_run_id: _Optional[str] = ..., parent_step: _Optional[str] = ..., item_index: _Optional[int] = ..., fan_out: _Optional[_Union[FanOutProgress, _Mapping]] = ...) -> None: ...

class StepError(_message.Message):
    __slots__ = ["code", "error_class", "message", "retryable"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    code: str
    error_class: _common_pb2.ErrorClass
    message: str
    retryable: bool
    def __init__(self, error_class: _Optional[_Union[_common_pb2.ErrorClass, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., retryable: bool = ...) -> None: ...

class SubmitRunRequest(_message.Message):
    __slots__ = ["await_ms", "definition", "definition_ref", "environment_id", "input", "priority", "project_id", "run_request_id", "search_attributes", "start"]
    class SearchAttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _search_pb2.SearchAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_search_pb2.SearchAttributeValue, _Mapping]] = ...) -> None: ...
    AWAIT_MS_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_REF_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    await_ms: int
    definition: _definition_pb2.WorkflowDefinition
    definition_ref: _definition_pb2.DefinitionRef
    environment_id: str
    input: _struct_pb2.Value
    priority: int
    project_id: str
    run_request_id: str
    search_attributes: _containers.MessageMap[str, _search_pb2.SearchAttributeValue]
    start: bool
    def __init__(self, definition: _Optional[_Union[_definition_pb2.WorkflowDefinition, _Mapping]] = ..., run_request_id: _Optional[str] = ..., start: bool = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., await_ms: _Optional[int] = ..., definition_ref: _Optional[_Union[_definition_pb2.DefinitionRef, _Mapping]] = ..., search_attributes: _Optional[_Mapping[str, _search_pb2.SearchAttributeValue]] = ..., priority: _Optional[int] = ...) -> None: ...

class SubmitRunResponse(_message.Message):
    __slots__ = ["existing", "run"]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    existing: bool
    run: Run
    def __init__(self, run: _Optional[_Union[Run, _Mapping]] = ..., existing: bool = ...) -> None: ...

class RunStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RunSubstatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class StepStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CompensationOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CompensationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class AttemptOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BatchOperation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BatchState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BatchRunOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
