from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from weft.v1 import common_pb2 as _common_pb2
from weft.v1 import run_pb2 as _run_pb2
from weft.v1 import search_pb2 as _search_pb2
from weft.v1 import signal_pb2 as _signal_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
RESYNC_MODE_FROM_SNAPSHOT: ResyncMode
RESYNC_MODE_FULL: ResyncMode
RESYNC_MODE_UNSPECIFIED: ResyncMode
SIGNAL_KIND_APPROVE: SignalKind
SIGNAL_KIND_CANCEL: SignalKind
SIGNAL_KIND_MANUAL_COMPLETION: SignalKind
SIGNAL_KIND_PAUSE: SignalKind
SIGNAL_KIND_RERUN: SignalKind
SIGNAL_KIND_RESUME: SignalKind
SIGNAL_KIND_RETRY_STEP: SignalKind
SIGNAL_KIND_SKIP_STEP: SignalKind
SIGNAL_KIND_UNSPECIFIED: SignalKind
VERIFY_STATE_COMPLETED_RESULT_UNAVAILABLE: VerifyState
VERIFY_STATE_COMPLETED_WITH_RESULT: VerifyState
VERIFY_STATE_INDETERMINATE: VerifyState
VERIFY_STATE_NOT_COMPLETED: VerifyState
VERIFY_STATE_UNSPECIFIED: VerifyState

class ChildRunEnded(_message.Message):
    __slots__ = ["child_run_id", "completed_at", "status"]
    CHILD_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    child_run_id: str
    completed_at: _timestamp_pb2.Timestamp
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., child_run_id: _Optional[str] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ChildRunStarted(_message.Message):
    __slots__ = ["child_run_id", "started_at", "status"]
    CHILD_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    child_run_id: str
    started_at: _timestamp_pb2.Timestamp
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., child_run_id: _Optional[str] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CompensationFailed(_message.Message):
    __slots__ = ["completed_at", "error"]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    completed_at: _timestamp_pb2.Timestamp
    error: _run_pb2.StepError
    def __init__(self, error: _Optional[_Union[_run_pb2.StepError, _Mapping]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CompensationStarted(_message.Message):
    __slots__ = ["idempotency_key", "input", "operation"]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    input: _struct_pb2.Value
    operation: str
    def __init__(self, operation: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class CompensationSucceeded(_message.Message):
    __slots__ = ["completed_at"]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    completed_at: _timestamp_pb2.Timestamp
    def __init__(self, completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ["child_run_ended", "child_run_started", "compensation_failed", "compensation_started", "compensation_succeeded", "emitted_at", "emitted_by", "engine_attempt_id", "event_id", "event_type", "idempotency_key", "logical_attempt_id", "occurred_at", "plan_version", "run_approved", "run_blocked", "run_cancelled", "run_compensating", "run_completed", "run_drained", "run_failed", "run_id", "run_paused", "run_queued", "run_rerun", "run_resumed", "run_seq", "run_started", "run_submitted", "run_unblocked", "search_attributes_upserted", "signal_accepted", "signal_consumed", "signal_rejected", "step_attempt_recorded", "step_cancelled", "step_completed", "step_failed", "step_fanned_out", "step_id", "step_iterated", "step_retried", "step_scheduled", "step_skipped", "step_sleeping", "step_started", "step_verified", "step_waiting"]
    CHILD_RUN_ENDED_FIELD_NUMBER: _ClassVar[int]
    CHILD_RUN_STARTED_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_FAILED_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_STARTED_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    EMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    EMITTED_BY_FIELD_NUMBER: _ClassVar[int]
    ENGINE_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    LOGICAL_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    RUN_APPROVED_FIELD_NUMBER: _ClassVar[int]
    RUN_BLOCKED_FIELD_NUMBER: _ClassVar[int]
    RUN_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    RUN_COMPENSATING_FIELD_NUMBER: _ClassVar[int]
    RUN_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    RUN_DRAINED_FIELD_NUMBER: _ClassVar[int]
    RUN_FAILED_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_PAUSED_FIELD_NUMBER: _ClassVar[int]
    RUN_QUEUED_FIELD_NUMBER: _ClassVar[int]
    RUN_RERUN_FIELD_NUMBER: _ClassVar[int]
    RUN_RESUMED_FIELD_NUMBER: _ClassVar[int]
    RUN_SEQ_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_FIELD_NUMBER: _ClassVar[int]
    RUN_SUBMITTED_FIELD_NUMBER: _ClassVar[int]
    RUN_UNBLOCKED_FIELD_NUMBER: _ClassVar[int]
    SEARCH_ATTRIBUTES_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_CONSUMED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_REJECTED_FIELD_NUMBER: _ClassVar[int]
    STEP_ATTEMPT_RECORDED_FIELD_NUMBER: _ClassVar[int]
    STEP_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    STEP_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    STEP_FAILED_FIELD_NUMBER: _ClassVar[int]
    STEP_FANNED_OUT_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ITERATED_FIELD_NUMBER: _ClassVar[int]
    STEP_RETRIED_FIELD_NUMBER: _ClassVar[int]
    STEP_SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    STEP_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    STEP_SLEEPING_FIELD_NUMBER: _ClassVar[int]
    STEP_STARTED_FIELD_NUMBER: _ClassVar[int]
    STEP_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    STEP_WAITING_FIELD_NUMBER: _ClassVar[int]
    child_run_ended: ChildRunEnded
    child_run_started: ChildRunStarted
    compensation_failed: CompensationFailed
    compensation_started: CompensationStarted
    compensation_succeeded: CompensationSucceeded
    emitted_at: _timestamp_pb2.Timestamp
    emitted_by: str
    engine_attempt_id: int
    event_id: str
    event_type: str
    idempotency_key: str
    logical_attempt_id: int
    occurred_at: _timestamp_pb2.Timestamp
    plan_version: str
    run_approved: RunApproved
    run_blocked: RunBlocked
    run_cancelled: RunCancelled
    run_compensating: RunCompensating
    run_completed: RunCompleted
    run_drained: RunDrained
    run_failed: RunFailed
    run_id: str
    run_paused: RunPaused
    run_queued: RunQueued
    run_rerun: RunRerun
    run_resumed: RunResumed
    run_seq: int
    run_started: RunStarted
    run_submitted: RunSubmitted
    run_unblocked: RunUnblocked
    search_attributes_upserted: _search_pb2.SearchAttributesUpserted
    signal_accepted: SignalAccepted
    signal_consumed: SignalConsumed
    signal_rejected: SignalRejected
    step_attempt_recorded: StepAttemptRecorded
    step_cancelled: StepCancelled
    step_completed: StepCompleted
    step_failed: StepFailed
    step_fanned_out: StepFannedOut
    step_id: str
    step_iterated: StepIterated
    step_retried: StepRetried
    step_scheduled: StepScheduled
    step_skipped: StepSkipped
    step_sleeping: StepSleeping
    step_started: StepStarted
    step_verified: StepVerified
    step_waiting: StepWaiting
    def __init__(self, event_type: _Optional[str] = ..., event_id: _Optional[str] = ..., run_id: _Optional[str] = ..., run_seq: _Optional[int] = ..., idempotency_key: _Optional[str] = ..., emitted_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., occurred_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., emitted_by: _Optional[str] = ..., step_id: _Optional[str] = ..., logical_attempt_id: _Optional[int] = ..., engine_attempt_id: _Optional[int] = ..., plan_version: _Optional[str] = ..., run_submitted: _Optional[_Union[RunSubmitted, _Mapping]] = ..., run_approved: _Optional[_Union[RunApproved, _Mapping]] = ..., run_queued: _Optional[_Union[RunQueued, _Mapping]] = ..., run_started: _Optional[_Union[RunStarted, _Mapping]] = ..., run_blocked: _Optional[_Union[RunBlocked, _Mapping]] = ..., run_unblocked: _Optional[_Union[RunUnblocked, _Mapping]] = ..., run_paused: _Optional[_Union[RunPaused, _Mapping]] = ..., run_drained: _Optional[_Union[RunDrained, _Mapping]] = ..., run_resumed: _Optional[_Union[RunResumed, _Mapping]] = ..., run_compensating: _Optional[_Union[RunCompensating, _Mapping]] = ..., run_completed: _Optional[_Union[RunCompleted, _Mapping]] = ..., run_failed: _Optional[_Union[RunFailed, _Mapping]] = ..., run_cancelled: _Optional[_Union[RunCancelled, _Mapping]] = ..., run_rerun: _Optional[_Union[RunRerun, _Mapping]] = ..., search_attributes_upserted: _Optional[_Union[_search_pb2.SearchAttributesUpserted, _Mapping]] = ..., step_scheduled: _Optional[_Union[StepScheduled, _Mapping]] = ..., step_started: _Optional[_Union[StepStarted, _Mapping]] = ..., step_completed: _Optional[_Union[StepCompleted, _Mapping]] = ..., step_failed: _Optional[_Union[StepFailed, _Mapping]] = ..., step_skipped: _Optional[_Union[StepSkipped, _Mapping]] = ..., step_cancelled: _Optional[_Union[StepCancelled, _Mapping]] = ..., step_waiting: _Optional[_Union[StepWaiting, _Mapping]] = ..., step_retried: _Optional[_Union[StepRetried, _Mapping]] = ..., step_attempt_recorded: _Optional[_Union[StepAttemptRecorded, _Mapping]] = ..., step_verified: _Optional[_Union[StepVerified, _Mapping]] = ..., step_sleeping: _Optional[_Union[StepSleeping, _Mapping]] = ..., step_iterated: _Optional[_Union[StepIterated, _Mapping]] = ..., compensation_started: _Optional[_Union[CompensationStarted, _Mapping]] = ..., compensation_succeeded: _Optional[_Union[CompensationSucceeded, _Mapping]] = ..., compensation_failed: _Optional[_Union[CompensationFailed, _Mapping]] = ..., signal_accepted: _Optional[_Union[SignalAccepted, _Mapping]] = ..., signal_rejected: _Optional[_Union[SignalRejected, _Mapping]] = ..., signal_consumed: _Optional[_Union[SignalConsumed, _Mapping]] = ..., child_run_started: _Optional[_Union[ChildRunStarted, _Mapping]] = ..., child_run_ended: _Optional[_Union[ChildRunEnded, _Mapping]] = ..., step_fanned_out: _Optional[_Union[StepFannedOut, _Mapping]] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ["after_seq", "page_size", "run_id"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    page_size: int
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., after_seq: _Optional[int] = ..., page_size: _Optional[int] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ["events", "has_more", "last_event_seq"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    has_more: bool
    last_event_seq: int
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., last_event_seq: _Optional[int] = ..., has_more: bool = ...) -> None: ...

class PlanRef(_message.Message):
    __slots__ = ["plan_id", "plan_version", "schema_version", "sha256", "uri"]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    URI_FIELD_NUMBER: _ClassVar[int]
    plan_id: str
    plan_version: str
    schema_version: str
    sha256: str
    uri: str
    def __init__(self, uri: _Optional[str] = ..., sha256: _Optional[str] = ..., schema_version: _Optional[str] = ..., plan_id: _Optional[str] = ..., plan_version: _Optional[str] = ...) -> None: ...

class ResyncRunRequest(_message.Message):
    __slots__ = ["mode", "run_id", "snapshot_seq"]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_SEQ_FIELD_NUMBER: _ClassVar[int]
    mode: ResyncMode
    run_id: str
    snapshot_seq: int
    def __init__(self, run_id: _Optional[str] = ..., mode: _Optional[_Union[ResyncMode, str]] = ..., snapshot_seq: _Optional[int] = ...) -> None: ...

class ResyncRunResponse(_message.Message):
    __slots__ = ["events", "last_event_seq", "mode", "snapshot"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    last_event_seq: int
    mode: ResyncMode
    snapshot: _run_pb2.Run
    def __init__(self, mode: _Optional[_Union[ResyncMode, str]] = ..., snapshot: _Optional[_Union[_run_pb2.Run, _Mapping]] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., last_event_seq: _Optional[int] = ...) -> None: ...

class RunApproved(_message.Message):
    __slots__ = ["approved_by", "reason", "status"]
    APPROVED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    approved_by: str
    reason: str
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., approved_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RunBlocked(_message.Message):
    __slots__ = ["reason", "status", "waiting_on"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WAITING_ON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    status: _run_pb2.RunStatus
    waiting_on: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., waiting_on: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ...) -> None: ...

class RunCancelled(_message.Message):
    __slots__ = ["cancellation", "compensation_outcome", "completed_at", "status"]
    CANCELLATION_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    cancellation: _run_pb2.Cancellation
    compensation_outcome: _run_pb2.CompensationOutcome
    completed_at: _timestamp_pb2.Timestamp
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., cancellation: _Optional[_Union[_run_pb2.Cancellation, _Mapping]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., compensation_outcome: _Optional[_Union[_run_pb2.CompensationOutcome, str]] = ...) -> None: ...

class RunCompensating(_message.Message):
    __slots__ = ["cancel_requested", "compensation_order", "failed_action_id", "status"]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    COMPENSATION_ORDER_FIELD_NUMBER: _ClassVar[int]
    FAILED_ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    cancel_requested: bool
    compensation_order: _containers.RepeatedScalarFieldContainer[str]
    failed_action_id: str
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., failed_action_id: _Optional[str] = ..., compensation_order: _Optional[_Iterable[str]] = ..., cancel_requested: bool = ...) -> None: ...

class RunCompleted(_message.Message):
    __slots__ = ["completed_at", "status"]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    completed_at: _timestamp_pb2.Timestamp
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunContext(_message.Message):
    __slots__ = ["environment_id", "project_id", "tenant_id", "trigger_source", "triggered_by"]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TRIGGERED_BY_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_SOURCE_FIELD_NUMBER: _ClassVar[int]
    environment_id: str
    project_id: str
    tenant_id: str
    trigger_source: str
    triggered_by: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., environment_id: _Optional[str] = ..., triggered_by: _Optional[str] = ..., trigger_source: _Optional[str] = ...) -> None: ...

class RunDrained(_message.Message):
    __slots__ = ["orphaned_tasks", "status", "timed_out"]
    ORPHANED_TASKS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    orphaned_tasks: int
    status: _run_pb2.RunStatus
    timed_out: bool
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., timed_out: bool = ..., orphaned_tasks: _Optional[int] = ...) -> None: ...

class RunFailed(_message.Message):
    __slots__ = ["compensation_outcome", "completed_at", "error", "status"]
    COMPENSATION_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    compensation_outcome: _run_pb2.CompensationOutcome
    completed_at: _timestamp_pb2.Timestamp
    error: _run_pb2.RunError
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., error: _Optional[_Union[_run_pb2.RunError, _Mapping]] = ..., compensation_outcome: _Optional[_Union[_run_pb2.CompensationOutcome, str]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunPaused(_message.Message):
    __slots__ = ["in_flight_tasks", "reason", "requested_by", "status", "substatus"]
    IN_FLIGHT_TASKS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUBSTATUS_FIELD_NUMBER: _ClassVar[int]
    in_flight_tasks: int
    reason: str
    requested_by: str
    status: _run_pb2.RunStatus
    substatus: _run_pb2.RunSubstatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., substatus: _Optional[_Union[_run_pb2.RunSubstatus, str]] = ..., in_flight_tasks: _Optional[int] = ..., requested_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RunQueued(_message.Message):
    __slots__ = ["reason", "status"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class RunRerun(_message.Message):
    __slots__ = ["from_step", "reason", "reopened", "requested_by", "status"]
    FROM_STEP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REOPENED_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    from_step: str
    reason: str
    reopened: _containers.RepeatedScalarFieldContainer[str]
    requested_by: str
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., from_step: _Optional[str] = ..., reopened: _Optional[_Iterable[str]] = ..., requested_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RunResumed(_message.Message):
    __slots__ = ["requested_by", "status"]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    requested_by: str
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., requested_by: _Optional[str] = ...) -> None: ...

class RunStarted(_message.Message):
    __slots__ = ["context", "engine_run_ref", "engine_type", "plan_ref", "started_at", "status"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    ENGINE_RUN_REF_FIELD_NUMBER: _ClassVar[int]
    ENGINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    PLAN_REF_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    context: RunContext
    engine_run_ref: str
    engine_type: str
    plan_ref: PlanRef
    started_at: _timestamp_pb2.Timestamp
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., engine_run_ref: _Optional[str] = ..., engine_type: _Optional[str] = ..., plan_ref: _Optional[_Union[PlanRef, _Mapping]] = ..., context: _Optional[_Union[RunContext, _Mapping]] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunSubmitted(_message.Message):
    __slots__ = ["context", "plan_ref", "run_request_id", "status"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    PLAN_REF_FIELD_NUMBER: _ClassVar[int]
    RUN_REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    context: RunContext
    plan_ref: PlanRef
    run_request_id: str
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ..., plan_ref: _Optional[_Union[PlanRef, _Mapping]] = ..., context: _Optional[_Union[RunContext, _Mapping]] = ..., run_request_id: _Optional[str] = ...) -> None: ...

class RunUnblocked(_message.Message):
    __slots__ = ["status"]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _run_pb2.RunStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.RunStatus, str]] = ...) -> None: ...

class SignalAccepted(_message.Message):
    __slots__ = ["actor", "compensate", "kind", "manual_completion", "result"]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    COMPENSATE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MANUAL_COMPLETION_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    actor: str
    compensate: bool
    kind: SignalKind
    manual_completion: _signal_pb2.ManualCompletionResult
    result: _common_pb2.AcceptedSignalResult
    def __init__(self, kind: _Optional[_Union[SignalKind, str]] = ..., result: _Optional[_Union[_common_pb2.AcceptedSignalResult, _Mapping]] = ..., actor: _Optional[str] = ..., manual_completion: _Optional[_Union[_signal_pb2.ManualCompletionResult, _Mapping]] = ..., compensate: bool = ...) -> None: ...

class SignalConsumed(_message.Message):
    __slots__ = ["signal_id", "signal_name"]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    signal_id: str
    signal_name: str
    def __init__(self, signal_name: _Optional[str] = ..., signal_id: _Optional[str] = ...) -> None: ...

class SignalRejected(_message.Message):
    __slots__ = ["actor", "actor_user_id", "kind", "reason", "signal_id", "signal_name"]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    ACTOR_USER_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    actor: str
    actor_user_id: str
    kind: SignalKind
    reason: str
    signal_id: str
    signal_name: str
    def __init__(self, kind: _Optional[_Union[SignalKind, str]] = ..., signal_name: _Optional[str] = ..., signal_id: _Optional[str] = ..., actor: _Optional[str] = ..., reason: _Optional[str] = ..., actor_user_id: _Optional[str] = ...) -> None: ...

class StepAttemptRecorded(_message.Message):
    __slots__ = ["attempt", "correlation_id"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CORRELATION_ID_FIELD_NUMBER: _ClassVar[int]
    attempt: _run_pb2.Attempt
    correlation_id: str
    def __init__(self, attempt: _Optional[_Union[_run_pb2.Attempt, _Mapping]] = ..., correlation_id: _Optional[str] = ...) -> None: ...

class StepCancelled(_message.Message):
    __slots__ = ["reason", "status"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class StepCompleted(_message.Message):
    __slots__ = ["artifacts", "completed_at", "output", "source", "status"]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.ArtifactRef]
    completed_at: _timestamp_pb2.Timestamp
    output: _struct_pb2.Value
    source: str
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.ArtifactRef, _Mapping]]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., source: _Optional[str] = ...) -> None: ...

class StepFailed(_message.Message):
    __slots__ = ["completed_at", "error", "next_attempt_at", "output", "status", "will_retry"]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WILL_RETRY_FIELD_NUMBER: _ClassVar[int]
    completed_at: _timestamp_pb2.Timestamp
    error: _run_pb2.StepError
    next_attempt_at: _timestamp_pb2.Timestamp
    output: _struct_pb2.Value
    status: _run_pb2.StepStatus
    will_retry: bool
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., error: _Optional[_Union[_run_pb2.StepError, _Mapping]] = ..., completed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., will_retry: bool = ..., next_attempt_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class StepFannedOut(_message.Message):
    __slots__ = ["item_count", "max_concurrency", "started_at", "status"]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    item_count: int
    max_concurrency: int
    started_at: _timestamp_pb2.Timestamp
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., item_count: _Optional[int] = ..., max_concurrency: _Optional[int] = ...) -> None: ...

class StepIterated(_message.Message):
    __slots__ = ["iteration", "new_logical_attempt_id", "output", "status"]
    ITERATION_FIELD_NUMBER: _ClassVar[int]
    NEW_LOGICAL_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    iteration: int
    new_logical_attempt_id: int
    output: _struct_pb2.Value
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., iteration: _Optional[int] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., new_logical_attempt_id: _Optional[int] = ...) -> None: ...

class StepRetried(_message.Message):
    __slots__ = ["new_logical_attempt_id", "requested_by", "rerun", "status"]
    NEW_LOGICAL_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    RERUN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    new_logical_attempt_id: int
    requested_by: str
    rerun: bool
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., new_logical_attempt_id: _Optional[int] = ..., requested_by: _Optional[str] = ..., rerun: bool = ...) -> None: ...

class StepScheduled(_message.Message):
    __slots__ = ["input", "not_before", "queue", "status", "task_id"]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    input: _struct_pb2.Value
    not_before: _timestamp_pb2.Timestamp
    queue: str
    status: _run_pb2.StepStatus
    task_id: str
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., task_id: _Optional[str] = ..., queue: _Optional[str] = ..., not_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class StepSkipped(_message.Message):
    __slots__ = ["reason", "status"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class StepSleeping(_message.Message):
    __slots__ = ["started_at", "status", "wake_at"]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WAKE_AT_FIELD_NUMBER: _ClassVar[int]
    started_at: _timestamp_pb2.Timestamp
    status: _run_pb2.StepStatus
    wake_at: _timestamp_pb2.Timestamp
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., wake_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StepStarted(_message.Message):
    __slots__ = ["started_at", "status", "worker_id"]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    started_at: _timestamp_pb2.Timestamp
    status: _run_pb2.StepStatus
    worker_id: str
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., worker_id: _Optional[str] = ..., started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StepVerified(_message.Message):
    __slots__ = ["diagnostic", "reconciliation_key", "verify_state"]
    DIAGNOSTIC_FIELD_NUMBER: _ClassVar[int]
    RECONCILIATION_KEY_FIELD_NUMBER: _ClassVar[int]
    VERIFY_STATE_FIELD_NUMBER: _ClassVar[int]
    diagnostic: str
    reconciliation_key: str
    verify_state: VerifyState
    def __init__(self, verify_state: _Optional[_Union[VerifyState, str]] = ..., reconciliation_key: _Optional[str] = ..., diagnostic: _Optional[str] = ...) -> None: ...

class StepWaiting(_message.Message):
    __slots__ = ["completion_token", "deadline", "signal_name", "status"]
    COMPLETION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    completion_token: str
    deadline: _timestamp_pb2.Timestamp
    signal_name: str
    status: _run_pb2.StepStatus
    def __init__(self, status: _Optional[_Union[_run_pb2.StepStatus, str]] = ..., completion_token: _Optional[str] = ..., signal_name: _Optional[str] = ..., deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WatchEventsRequest(_message.Message):
    __slots__ = ["after_seq", "run_id"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    run_id: str
    def __init__(self, run_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchEventsResponse(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class VerifyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SignalKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ResyncMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
