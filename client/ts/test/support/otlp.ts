// An in-process OTLP/HTTP trace receiver for the tests: POST /v1/traces in
// protobuf (weftd's Go exporter) or JSON (the OpenTelemetry JS exporter),
// every span kept flattened with its service, parent, attributes, status,
// events and links. The protobuf side reads the wire format of
// opentelemetry/proto/collector/trace/v1 with @bufbuild/protobuf's reader.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

/** One received span. Ids are lower-case hex; parent is "" for a root. */
export interface GotSpan {
  service: string;
  traceId: string;
  spanId: string;
  parent: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attrs: Record<string, string>;
  status: { code: number; message: string };
  events: Array<{ name: string; attrs: Record<string, string> }>;
  links: Array<{ traceId: string; spanId: string; attrs: Record<string, string> }>;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base URL (http://127.0.0.1:port), as OTEL_EXPORTER_OTLP_ENDPOINT and --otlp-endpoint take it. */
  readonly url: string;
  /** The spans received so far. */
  spans(): GotSpan[];
  /** The content types of the requests received so far. */
  contentTypes(): string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const got: GotSpan[] = [];
  const types: string[] = [];
  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    types.push(type);
    try {
      if (type === "application/x-protobuf") {
        got.push(...decodeRequest(new Uint8Array(body)));
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      } else if (type === "application/json") {
        got.push(...fromJson(JSON.parse(body.toString("utf8")) as JsonRequest));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else {
        res.writeHead(415).end();
      }
    } catch (e) {
      res.writeHead(400).end(String(e));
    }
  }
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...got],
    contentTypes: () => [...types],
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** Reads a message's fields: each call of visit gets a field number and the reader positioned at its value. */
function fields(bytes: Uint8Array, visit: (no: number, r: BinaryReader, wt: WireType) => boolean): void {
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (!visit(no, r, wt)) r.skip(wt, no);
  }
}

// ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
function decodeRequest(bytes: Uint8Array): GotSpan[] {
  const out: GotSpan[] = [];
  fields(bytes, (no, r) => {
    if (no !== 1) return false;
    // ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
    let service = "";
    const spans: GotSpan[] = [];
    fields(r.bytes(), (no, r) => {
      if (no === 1) {
        // Resource { repeated KeyValue attributes = 1; }
        const attrs: Record<string, string> = {};
        fields(r.bytes(), (no, r) => no === 1 && (keyValue(r.bytes(), attrs), true));
        service = attrs["service.name"] ?? "";
        return true;
      }
      if (no === 2) {
        // ScopeSpans { repeated Span spans = 2; }
        fields(r.bytes(), (no, r) => no === 2 && (spans.push(span(r.bytes())), true));
        return true;
      }
      return false;
    });
    for (const s of spans) out.push({ ...s, service });
    return true;
  });
  return out;
}

// Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start 7, end 8,
// attributes 9, events 11, links 13, status 15.
function span(bytes: Uint8Array): GotSpan {
  const s: GotSpan = { service: "", traceId: "", spanId: "", parent: "", name: "", kind: 0, startNs: 0n, endNs: 0n, attrs: {}, status: { code: 0, message: "" }, events: [], links: [] };
  fields(bytes, (no, r) => {
    switch (no) {
      case 1: s.traceId = hex(r.bytes()); return true;
      case 2: s.spanId = hex(r.bytes()); return true;
      case 4: s.parent = hex(r.bytes()); return true;
      case 5: s.name = r.string(); return true;
      case 6: s.kind = r.int32(); return true;
      case 7: s.startNs = BigInt(r.fixed64()); return true;
      case 8: s.endNs = BigInt(r.fixed64()); return true;
      case 9: keyValue(r.bytes(), s.attrs); return true;
      case 11: {
        // Event { name 2; attributes 3; }
        const ev = { name: "", attrs: {} as Record<string, string> };
        fields(r.bytes(), (no, r) => (no === 2 ? ((ev.name = r.string()), true) : no === 3 && (keyValue(r.bytes(), ev.attrs), true)));
        s.events.push(ev);
        return true;
      }
      case 13: {
        // Link { trace_id 1; span_id 2; attributes 4; }
        const l = { traceId: "", spanId: "", attrs: {} as Record<string, string> };
        fields(r.bytes(), (no, r) => {
          if (no === 1) l.traceId = hex(r.bytes());
          else if (no === 2) l.spanId = hex(r.bytes());
          else if (no === 4) keyValue(r.bytes(), l.attrs);
          else return false;
          return true;
        });
        s.links.push(l);
        return true;
      }
      case 15:
        // Status { message 2; code 3; }
        fields(r.bytes(), (no, r) => (no === 2 ? ((s.status.message = r.string()), true) : no === 3 && ((s.status.code = r.int32()), true)));
        return true;
    }
    return false;
  });
  return s;
}

// KeyValue { string key = 1; AnyValue value = 2; }
function keyValue(bytes: Uint8Array, into: Record<string, string>): void {
  let key = "";
  let value = "";
  fields(bytes, (no, r) => (no === 1 ? ((key = r.string()), true) : no === 2 && ((value = anyValue(r.bytes())), true)));
  into[key] = value;
}

// AnyValue { string 1; bool 2; int64 3; double 4; ArrayValue 5; KeyValueList 6; bytes 7; }, as text.
function anyValue(bytes: Uint8Array): string {
  let v = "";
  fields(bytes, (no, r) => {
    switch (no) {
      case 1: v = r.string(); return true;
      case 2: v = String(r.bool()); return true;
      case 3: v = String(r.int64()); return true;
      case 4: v = String(r.double()); return true;
      case 5: {
        const items: string[] = [];
        fields(r.bytes(), (no, r) => no === 1 && (items.push(anyValue(r.bytes())), true));
        v = items.join(",");
        return true;
      }
      case 6: {
        const kv: Record<string, string> = {};
        fields(r.bytes(), (no, r) => no === 1 && (keyValue(r.bytes(), kv), true));
        v = JSON.stringify(kv);
        return true;
      }
      case 7: v = hex(r.bytes()); return true;
    }
    return false;
  });
  return v;
}

// OTLP/JSON (what @opentelemetry/exporter-trace-otlp-http sends): ids in hex,
// 64-bit integers as strings or numbers.
interface JsonAny {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAny[] };
  kvlistValue?: { values?: JsonKeyValue[] };
  bytesValue?: string;
}
interface JsonKeyValue {
  key: string;
  value?: JsonAny;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: JsonKeyValue[];
  events?: Array<{ name: string; attributes?: JsonKeyValue[] }>;
  links?: Array<{ traceId: string; spanId: string; attributes?: JsonKeyValue[] }>;
  status?: { code?: number; message?: string };
}
interface JsonRequest {
  resourceSpans?: Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>;
}

function jsonAttrs(kvs: JsonKeyValue[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of kvs ?? []) out[kv.key] = jsonValue(kv.value);
  return out;
}

function jsonValue(v: JsonAny | undefined): string {
  if (!v) return "";
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return String(v.boolValue);
  if (v.intValue !== undefined) return String(v.intValue);
  if (v.doubleValue !== undefined) return String(v.doubleValue);
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue).join(",");
  if (v.kvlistValue) return JSON.stringify(jsonAttrs(v.kvlistValue.values));
  return v.bytesValue ?? "";
}

function fromJson(req: JsonRequest): GotSpan[] {
  const out: GotSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const service = jsonAttrs(rs.resource?.attributes)["service.name"] ?? "";
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service,
          traceId: s.traceId.toLowerCase(),
          spanId: s.spanId.toLowerCase(),
          parent: (s.parentSpanId ?? "").toLowerCase(),
          name: s.name,
          kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attrs: jsonAttrs(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          events: (s.events ?? []).map((e) => ({ name: e.name, attrs: jsonAttrs(e.attributes) })),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId.toLowerCase(), spanId: l.spanId.toLowerCase(), attrs: jsonAttrs(l.attributes) })),
        });
      }
    }
  }
  return out;
}

/**
 * renderTree draws the spans of traceId as an indented tree, children in the
 * order they started, each with its process, duration and what it names (as
 * cmd/weftd's tests draw theirs): docs/observability.md's picture of the
 * TypeScript worker's run is made from it (WEFT_TRACE_DUMP=FILE).
 */
export function renderTree(spans: GotSpan[], traceId: string): string {
  const inTrace = spans.filter((s) => s.traceId === traceId).sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
  const ids = new Set(inTrace.map((s) => s.spanId));
  const children = new Map<string, GotSpan[]>();
  const roots: GotSpan[] = [];
  for (const s of inTrace) {
    if (ids.has(s.parent)) children.set(s.parent, [...(children.get(s.parent) ?? []), s]);
    else roots.push(s);
  }
  const lines: string[] = [];
  const draw = (s: GotSpan, prefix: string, last: boolean, depth: number) => {
    const [branch, next] = depth === 0 ? ["", ""] : last ? ["└─ ", "   "] : ["├─ ", "│  "];
    lines.push(`${prefix}${branch}${s.name}  [${s.service}] ${durationText(s.endNs - s.startNs)}${labelText(s)}`);
    const kids = children.get(s.spanId) ?? [];
    kids.forEach((k, i) => draw(k, prefix + next, i === kids.length - 1, depth + 1));
  };
  for (const r of roots) draw(r, "", true, 0);
  return lines.join("\n") + "\n";
}

/** durationText writes ns as Go's time.Duration does, rounded to 10 µs. */
function durationText(ns: bigint): string {
  const us = Math.round(Number(ns) / 10000) * 10;
  if (us === 0) return "0s";
  if (us < 1000) return `${us}µs`;
  if (us < 1_000_000) return `${Number((us / 1000).toFixed(2))}ms`;
  return `${Number((us / 1_000_000).toFixed(5))}s`;
}

/** labelText is what the tree shows of a span's attributes. */
function labelText(s: GotSpan): string {
  const parts: string[] = [];
  for (const k of ["weft.step", "weft.attempt", "weft.queue", "weft.outcome", "weft.decided_by", "weft.store.ops"]) {
    if (s.attrs[k] !== undefined) parts.push(`${k.slice("weft.".length)}=${s.attrs[k]}`);
  }
  if (s.links.length > 0) parts.push("linked to the call");
  return parts.length ? `  ${parts.join(" ")}` : "";
}
