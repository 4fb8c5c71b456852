// @weft/client: a thin typed layer over the generated weft.v1 code.
//
// createWeftClient gives typed clients of RunService, SignalService,
// EventService and WorkerService over connect-web (Connect or gRPC-Web, so it
// runs in browsers) or a Transport you pass (e.g. connect-node's gRPC). Every
// call rejects with a WeftError whose `code` is stable.
export { createWeftClient, weftTransport, type WeftClient, type WeftClientOptions } from "./client";
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
} from "./errors";
export { signalRun, newSignalId, type SignalRunInput, type SignalRunOptions } from "./signal";
export { bearerAuth, type TokenSource } from "./auth";
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
} from "./values";

// The generated messages, enums and service descriptors.
export * from "./gen/weft/v1/common_pb";
export * from "./gen/weft/v1/definition_pb";
export * from "./gen/weft/v1/event_pb";
export * from "./gen/weft/v1/fault_pb";
export * from "./gen/weft/v1/run_pb";
export * from "./gen/weft/v1/signal_pb";
export * from "./gen/weft/v1/worker_pb";
export { ViolationsSchema, type Violations, type Violation } from "./gen/buf/validate/validate_pb";
