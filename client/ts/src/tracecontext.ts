// W3C trace context (traceparent) without an OpenTelemetry SDK: the client
// sends the traceparent of the span in the active context with every call,
// so that weftd continues the caller's trace (docs/observability.md), and the
// worker parses a task's. @opentelemetry/api alone: with no SDK registered the
// active context holds no span and nothing is sent.
import { TraceFlags, context, trace, type SpanContext } from "@opentelemetry/api";

// version-traceId-spanId-flags; version ff is invalid, version 00 has exactly four fields.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * parseTraceparent answers the remote span context a W3C traceparent names,
 * or undefined when it is empty or not W3C's.
 */
export function parseTraceparent(traceparent: string): SpanContext | undefined {
  const m = TRACEPARENT.exec(traceparent);
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  const sc: SpanContext = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return trace.isSpanContextValid(sc) ? sc : undefined;
}

/** formatTraceparent answers sc as a W3C traceparent. */
export function formatTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & TraceFlags.SAMPLED ? "01" : "00"}`;
}

/** activeSpanContext answers the valid span context of the active context, if any. */
export function activeSpanContext(): SpanContext | undefined {
  const sc = trace.getSpanContext(context.active());
  return sc && trace.isSpanContextValid(sc) ? sc : undefined;
}

/**
 * injectTraceContext sets the traceparent (and tracestate) of sc in header,
 * unless header names a traceparent of its own (a worker's report names its
 * activity's span).
 */
export function injectTraceContext(header: Headers, sc: SpanContext): void {
  if (header.has("traceparent")) return;
  header.set("traceparent", formatTraceparent(sc));
  const state = sc.traceState?.serialize();
  if (state) header.set("tracestate", state);
}
