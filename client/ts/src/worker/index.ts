// The worker runtime of @weft-dev/client/worker: register typed activities
// and compensations by name, then run; see Worker.
export {
  Worker,
  ShutdownTimeoutError,
  WORKER_DEFAULTS,
  heartbeatEvery,
  atTime,
  type WorkerOptions,
  type WorkerLogger,
  type ActivityInfo,
  type ActivityContext,
  type ActivityFn,
  type ActivityOptions,
  type VerifyResult,
  type RunOptions,
} from "./worker.js";
export {
  ActivityFailure,
  TaskAborted,
  fail,
  rateLimited,
  sideEffectPossible,
  classify,
  MAX_RETRY_AFTER_MS,
  type AbortKind,
  type Classified,
} from "./failure.js";
export { Slots } from "./slots.js";
export { ErrorClass } from "../gen/weft/v1/common_pb.js";
export { VerifyState } from "../gen/weft/v1/event_pb.js";
export { TaskType } from "../gen/weft/v1/worker_pb.js";
export { SPAN_ACTIVITY, TRACER_NAME, type SpanOutcome } from "./tracing.js";
