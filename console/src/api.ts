// The console's only way to weftd: the public API through the generated
// TypeScript client over connect-web, on the origin that served the page.
import { createClient, ConnectError, Code, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { RunService } from "../../client/ts/src/gen/weft/v1/run_pb";
import { SignalService } from "../../client/ts/src/gen/weft/v1/signal_pb";
import { EventService } from "../../client/ts/src/gen/weft/v1/event_pb";
import { ScheduleService } from "../../client/ts/src/gen/weft/v1/schedule_pb";
import { FaultCode, FaultSchema } from "../../client/ts/src/gen/weft/v1/fault_pb";
import { ViolationsSchema } from "../../client/ts/src/gen/buf/validate/validate_pb";

const TOKEN_KEY = "weft.console.token";

/** The bearer token of this tab's session, if the person signed in. */
export function sessionToken(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

/** Keeps a token for this tab only (sessionStorage: gone when the tab closes). */
export function setSessionToken(token: string): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const bearer: Interceptor = (next) => async (req) => {
  const token = sessionToken();
  if (token) req.header.set("Authorization", `Bearer ${token}`);
  return next(req);
};

const transport = createConnectTransport({
  baseUrl: location.origin,
  useBinaryFormat: true,
  interceptors: [bearer],
});

/** Typed clients of the services the console uses. */
export const api = {
  runs: createClient(RunService, transport),
  signals: createClient(SignalService, transport),
  events: createClient(EventService, transport),
  schedules: createClient(ScheduleService, transport),
};

/** A fault as the console shows it: code, message, correlation id, field violations. */
export interface Fault {
  code: string;
  message: string;
  correlationId: string;
  violations: string[];
  unauthenticated: boolean;
  notFound: boolean;
}

/** faultOf converts anything a call threw into a Fault. */
export function faultOf(e: unknown): Fault {
  const err = ConnectError.from(e);
  const detail = err.findDetails(FaultSchema)[0];
  const code = detail && detail.code !== FaultCode.UNSPECIFIED ? (FaultCode[detail.code] ?? String(detail.code)) : Code[err.code];
  const violations = err
    .findDetails(ViolationsSchema)
    .flatMap((v) => v.violations)
    .map((v) => {
      const path = (v.field?.elements ?? []).map((el) => el.fieldName).join(".");
      return `${path}: ${v.ruleId}${v.message ? ` (${v.message})` : ""}`;
    });
  return {
    code: String(code),
    message: err.rawMessage,
    correlationId: detail?.correlationId || err.metadata.get("weft-correlation-id") || "",
    violations,
    unauthenticated: err.code === Code.Unauthenticated,
    notFound: err.code === Code.NotFound,
  };
}
