// @weft-dev/client: a thin typed layer over the generated weft.v1 code.
//
// createWeftClient gives typed clients of RunService, SignalService,
// EventService and WorkerService over connect-web (Connect or gRPC-Web, so it
// runs in browsers) or a Transport you pass (e.g. connect-node's gRPC). Every
// call rejects with a WeftError whose `code` is stable.
export { createWeftClient, weftTransport, type WeftClient, type WeftClientOptions } from "./client.js";
export {
  WeftError,
  toWeftError,
  faultCodeName,
  formatFieldPath,
  isNetworkError,
  isRetryable,
  CORRELATION_HEADER,
  type FieldViolation,
  type WeftErrorCode,
  type WeftFaultCode,
  type ConnectCodeName,
} from "./errors.js";
export { signalRun, newSignalId, type SignalRunInput, type SignalRunOptions } from "./signal.js";
export { bearerAuth, type TokenSource } from "./auth.js";
export { parseTraceparent, formatTraceparent } from "./tracecontext.js";
export { parseDefinition, parseDuration, DefinitionError } from "./definition.js";
export {
  submit,
  submitAndAwait,
  listRuns,
  watchEvents,
  completeManualAction,
  type DefinitionSource,
  type SubmitOptions,
  type Submitted,
  type SubmitRunInit,
  type SubmitAndAwaitOptions,
  type ListRunsFilter,
  type WatchOptions,
  type CompleteManualInput,
} from "./runs.js";
export { withRetry, isTransient, backoffMs, retryPolicy, DEFAULT_RETRY_POLICY, type RetryPolicy, type WithRetryOptions } from "./retry.js";
export {
  toValue,
  fromValue,
  enumName,
  runStatusName,
  isTerminal,
  eventKind,
  waitForRun,
  awaitRun,
  type WaitForRunOptions,
  type AwaitRunOptions,
} from "./values.js";

// The generated messages, enums and service descriptors.
export * from "./gen/weft/v1/common_pb.js";
export * from "./gen/weft/v1/definition_pb.js";
export * from "./gen/weft/v1/event_pb.js";
export * from "./gen/weft/v1/fault_pb.js";
export * from "./gen/weft/v1/run_pb.js";
export * from "./gen/weft/v1/signal_pb.js";
export * from "./gen/weft/v1/worker_pb.js";
export { ViolationsSchema, type Violations, type Violation } from "./gen/buf/validate/validate_pb.js";
