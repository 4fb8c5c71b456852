// The console's only way to weftd: the public API through the generated
// TypeScript client over connect-web, on the origin that served the page.
import { createClient, ConnectError, Code, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { RunService } from "../../client/ts/src/gen/weft/v1/run_pb";
import { SignalService } from "../../client/ts/src/gen/weft/v1/signal_pb";
import { EventService } from "../../client/ts/src/gen/weft/v1/event_pb";
import { ScheduleService } from "../../client/ts/src/gen/weft/v1/schedule_pb";
import { IdentityService } from "../../client/ts/src/gen/weft/v1/identity_pb";
import { AuditService } from "../../client/ts/src/gen/weft/v1/audit_pb";
import { DefinitionService } from "../../client/ts/src/gen/weft/v1/definition_pb";
import { ViewService } from "../../client/ts/src/gen/weft/v1/view_pb";
import { WorkerService } from "../../client/ts/src/gen/weft/v1/worker_pb";
import { FaultCode, FaultSchema } from "../../client/ts/src/gen/weft/v1/fault_pb";
import { ViolationsSchema } from "../../client/ts/src/gen/buf/validate/validate_pb";

// The console holds no token: weftd keeps the signed-in person's tokens in
// a server-side session and the browser only an HttpOnly, SameSite=Strict
// cookie, which every same-origin call carries (docs/console.md#signing-in).

/** signedOut is dispatched on window when weftd answers UNAUTHENTICATED: the session ended. */
export const SIGNED_OUT = "weft:signed-out";

const watchSession: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (e) {
    const err = ConnectError.from(e);
    if (err.code === Code.Unauthenticated) dispatchEvent(new CustomEvent(SIGNED_OUT, { detail: err.rawMessage }));
    throw e;
  }
};

const transport = createConnectTransport({
  baseUrl: location.origin,
  useBinaryFormat: true,
  interceptors: [watchSession],
});

/** Typed clients of the services the console uses. */
export const api = {
  runs: createClient(RunService, transport),
  signals: createClient(SignalService, transport),
  events: createClient(EventService, transport),
  schedules: createClient(ScheduleService, transport),
  identity: createClient(IdentityService, transport),
  audit: createClient(AuditService, transport),
  definitions: createClient(DefinitionService, transport),
  views: createClient(ViewService, transport),
  workers: createClient(WorkerService, transport),
};

/** The ways this weftd lets a person sign in (GET /ui/auth/config). */
export interface AuthConfig {
  open: boolean;
  oidc: boolean;
  tokens: boolean;
}

export async function authConfig(): Promise<AuthConfig> {
  const res = await fetch("/ui/auth/config", { credentials: "same-origin" });
  if (!res.ok) throw new Error(`weftd answered ${res.status} for its sign-in configuration`);
  const c = await res.json();
  return { open: !!c.open, oidc: !!c.oidc, tokens: !!c.tokens };
}

/** signInWithToken hands a pasted token to weftd, which keeps it in the session; the page forgets it. */
export async function signInWithToken(token: string): Promise<string | undefined> {
  const res = await fetch("/ui/auth/token", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token }),
  });
  if (res.ok) return undefined;
  const body = await res.json().catch(() => ({}));
  return `${body.error ?? `weftd answered ${res.status}`}${body.correlation_id ? ` (correlation id ${body.correlation_id})` : ""}`;
}

/** signOut ends the session at weftd. */
export async function signOut(): Promise<void> {
  await fetch("/ui/auth/logout", { method: "POST", credentials: "same-origin" });
}

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
      const path = (v.field?.elements ?? [])
        .map((el) => (el.subscript.case === "index" ? `${el.fieldName}[${el.subscript.value}]` : el.fieldName))
        .join(".");
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

/** localFault is a refusal the console makes itself, before sending anything. */
export function localFault(message: string, violations: string[] = []): Fault {
  return { code: "INVALID_ARGUMENT", message, correlationId: "", violations, unauthenticated: false, notFound: false };
}
