// Workflow definitions from YAML or JSON text: the project's YAML shape
// (metadata/spec/steps, as `weft submit` reads it), or the API's own JSON
// shape of weft.v1.WorkflowDefinition.
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { isMap as isYamlMap, parseDocument } from "yaml";
import { ErrorClassSchema, type ErrorClass } from "./gen/weft/v1/common_pb.js";
import {
  ActionSchema,
  BackpressureMode,
  BackoffStrategy,
  CompletionMode,
  OnFailure,
  WorkflowDefinitionSchema,
  type Action,
  type CompensationHook,
  type RetryPolicy as RetryPolicyMsg,
  type WorkflowDefinition,
} from "./gen/weft/v1/definition_pb.js";
import type { FieldViolation } from "./errors.js";

/** The most 32-bit milliseconds a duration may be (30 days, the API's limit is checked by weftd). */
const MAX_UINT32 = 0xffffffff;
/** Attempts a retry policy may ask for (the API's limit). */
const MAX_ATTEMPTS = 10;

/**
 * DefinitionError: the text is not a definition. `violations` name each
 * problem's path in the document (e.g. "spec.steps[2].timeout") and rule; no
 * message quotes an input payload.
 */
export class DefinitionError extends Error {
  override readonly name = "DefinitionError";
  /** One entry per problem. */
  readonly violations: readonly FieldViolation[];
  constructor(violations: FieldViolation[]) {
    super(`invalid definition: ${violations.map((v) => (v.field ? `${v.field}: ${v.message}` : v.message)).join("; ")}`);
    this.violations = violations;
  }
}

/**
 * parseDefinition reads a workflow definition from YAML or JSON text (JSON is
 * YAML). Two shapes are accepted:
 *
 * - the project's YAML shape, as `weft submit` reads it (the Go loader is engine/definition's LoadYAML):
 *   `metadata.name`/`planId`, `metadata.version`, `spec.timeout`,
 *   `spec.requiresApproval`, `spec.maxConcurrentRuns`, `spec.backpressure`,
 *   `spec.steps` (`name`, `activity`, `dependsOn`, `input`, `timeout`,
 *   `heartbeatTimeout`, `scheduleToStartTimeout`, `retryPolicy`, `onFailure`, `manual`, `manualTimeout`,
 *   `waitForSignal`, `secrets`, `queue`, `when`, `repeat`, `sleep`, `sleepUntil`, `forEach`,
 *   `maxConcurrency`) and
 *   `spec.compensation`; its steps
 *   form a DAG, and a key the shape does not have is refused;
 * - the API's JSON form of weft.v1.WorkflowDefinition (a document with
 *   `actions`), e.g. from `weft get -o json`.
 *
 * Values weftd checks (name patterns, limits) are left to it; this throws a
 * {@link DefinitionError} for what cannot be read at all.
 */
export function parseDefinition(text: string): WorkflowDefinition {
  const doc = parseDocument(text, { merge: true, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = e.linePos?.[0]?.line;
    throw new DefinitionError([{ field: "", ruleId: "yaml.syntax", message: `YAML syntax error${line ? ` on line ${line}` : ""}: ${e.code}` }]);
  }
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 1000 });
  } catch {
    throw new DefinitionError([{ field: "", ruleId: "yaml.syntax", message: "the document's aliases expand too far" }]);
  }
  if (isMap(root) && Array.isArray(root.actions)) {
    try {
      return fromJson(WorkflowDefinitionSchema, root as JsonValue, { ignoreUnknownFields: false });
    } catch (e) {
      throw new DefinitionError([{ field: "", ruleId: "json.shape", message: `not a weft.v1.WorkflowDefinition: ${(e as Error).message}` }]);
    }
  }
  const anchored = new Set<string>();
  if (isYamlMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      const v = pair.value as { anchor?: string } | null;
      const k = (pair.key as { value?: unknown } | null)?.value;
      if (v?.anchor && typeof k === "string") anchored.add(k);
    }
  }
  const l = new Loader(anchored);
  const d = l.definition(root);
  if (l.violations.length > 0) throw new DefinitionError(l.violations);
  return d;
}

type Obj = Record<string, unknown>;

// The keys each mapping of the YAML shape may hold, as `weft submit` reads it:
// any other key is refused with its path (and the key it was probably meant
// to be). "input" values are free-form. At the top level, apiVersion and
// kind, keys starting with "x-" and keys whose value defines an anchor hold
// shared YAML and are ignored.
const definitionKeys = ["apiVersion", "kind", "metadata", "spec", "planId", "name", "planVersion", "version",
  "displayName", "timeout", "steps", "compensation", "requiresApproval", "maxConcurrentRuns", "backpressure"];
const metadataKeys = ["name", "version", "displayName"];
const specKeys = ["timeout", "steps", "compensation", "requiresApproval", "maxConcurrentRuns", "backpressure"];
const stepKeys = ["name", "id", "activity", "agent", "queue", "dependsOn", "onFailure", "timeout",
  "heartbeatTimeout", "scheduleToStartTimeout", "retryPolicy", "input", "manual", "manualTimeout", "waitForSignal", "secrets",
  "when", "repeat", "sleep", "sleepUntil", "forEach", "maxConcurrency"];
const repeatKeys = ["until", "maxIterations"];
const retryKeys = ["maxRetries", "maxAttempts", "backoff", "initialDelay", "maxDelay", "multiplier", "backoffMultiplier", "retryableErrors"];
const signalWaitKeys = ["name", "signal", "timeout"];
const compensationKeys = ["step", "operation", "action", "queue", "agent", "input", "timeout", "retryPolicy"];
const secretKeys = ["name", "ref"];

/** didYouMean answers `; did you mean "k"?` for the known key closest to key, when close enough to be a typo. */
export function didYouMean(key: string, keys: readonly string[]): string {
  let best = "";
  let bestDist = -1;
  for (const k of keys) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (bestDist < 0 || d < bestDist) [best, bestDist] = [k, d];
  }
  return bestDist < 0 || bestDist > Math.max(1, Math.floor(best.length / 3)) ? "" : `; did you mean ${JSON.stringify(best)}?`;
}

/** editDistance: the optimal-string-alignment distance (insertions, deletions, substitutions, neighbour swaps). */
export function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.max(a.length, b.length);
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

function isMap(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** get answers key of a mapping, or undefined when absent or null. */
function get(m: Obj | undefined, key: string): unknown {
  const v = m?.[key];
  return v === null ? undefined : v;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Loader turns the parsed document into a WorkflowDefinition, collecting every problem. */
class Loader {
  readonly violations: FieldViolation[] = [];

  constructor(private readonly anchored: ReadonlySet<string> = new Set()) {}

  /** knownKeys refuses every key of m that is not one of keys. */
  knownKeys(m: Obj | undefined, path: string, keys: readonly string[], top = false): void {
    for (const k of Object.keys(m ?? {})) {
      if (keys.includes(k)) continue;
      if (top && (k.startsWith("x-") || this.anchored.has(k))) continue;
      this.fail(join(path, k), "yaml.unknown_key", `unknown key ${JSON.stringify(k.slice(0, 64))}${didYouMean(k, keys)}`);
    }
  }

  fail(field: string, ruleId: string, message: string): void {
    this.violations.push({ field, ruleId, message });
  }

  definition(root: unknown): WorkflowDefinition {
    const d = create(WorkflowDefinitionSchema, { dag: true });
    if (!isMap(root)) {
      this.fail("", "yaml.type", "the document must be a mapping");
      return d;
    }
    const meta = isMap(root.metadata) ? root.metadata : undefined;
    const spec = isMap(root.spec) ? root.spec : undefined;
    this.knownKeys(root, "", definitionKeys, true);
    this.knownKeys(meta, "metadata", metadataKeys);
    this.knownKeys(spec, "spec", specKeys);
    d.planId = this.first([root, "", "planId"], [meta, "metadata", "name"], [root, "", "name"]);
    d.planVersion = this.first([root, "", "planVersion"], [root, "", "version"], [meta, "metadata", "version"]) || "1";
    d.displayName = this.first([root, "", "displayName"], [meta, "metadata", "displayName"]);
    const body = (key: string): [unknown, string] =>
      get(spec, key) !== undefined ? [get(spec, key), `spec.${key}`] : [get(root, key), key];
    const [timeout, tp] = body("timeout");
    if (timeout !== undefined) d.timeoutMs = this.duration(timeout, tp);
    const [approval, ap] = body("requiresApproval");
    if (approval !== undefined) d.requiresApproval = this.boolean(approval, ap);
    const [maxRuns, mp] = body("maxConcurrentRuns");
    if (maxRuns !== undefined) d.maxConcurrentRuns = this.integer(maxRuns, mp);
    const [bp, bpp] = body("backpressure");
    if (bp !== undefined) d.backpressure = this.backpressure(bp, bpp);
    const [steps, sp] = body("steps");
    if (steps !== undefined) d.actions = this.steps(steps, sp);
    const [comp, cp] = body("compensation");
    if (comp !== undefined) this.compensations(comp, cp, d.actions);
    return d;
  }

  /** first answers the string at the first present field, or "". */
  first(...fields: Array<[Obj | undefined, string, string]>): string {
    for (const [m, path, key] of fields) {
      const v = get(m, key);
      if (v !== undefined) return this.str(v, join(path, key));
    }
    return "";
  }

  boolean(v: unknown, path: string): boolean {
    if (typeof v === "boolean") return v;
    this.fail(path, "yaml.type", `${path} must be true or false`);
    return false;
  }

  backpressure(v: unknown, path: string): BackpressureMode {
    const s = this.str(v, path).toLowerCase();
    const map: Record<string, BackpressureMode> = { reject: BackpressureMode.REJECT, queue: BackpressureMode.QUEUE, delay: BackpressureMode.DELAY };
    if (s in map) return map[s];
    this.fail(path, "yaml.backpressure", "backpressure must be one of reject, queue, delay");
    return BackpressureMode.UNSPECIFIED;
  }

  secrets(v: unknown, path: string): Action["secrets"] {
    if (!Array.isArray(v)) {
      this.fail(path, "yaml.type", "secrets must be a list of {name, ref}");
      return [];
    }
    const out: Action["secrets"] = [];
    v.forEach((c, i) => {
      const p = `${path}[${i}]`;
      if (!isMap(c)) return this.fail(p, "yaml.type", "a secret reference must be a mapping of name and ref");
      this.knownKeys(c, p, secretKeys);
      out.push({ $typeName: "weft.v1.SecretRef", name: this.first([c, p, "name"]), ref: this.first([c, p, "ref"]) });
    });
    return out;
  }

  str(v: unknown, path: string): string {
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    this.fail(path, "yaml.type", `${path} must be a string`);
    return "";
  }

  strList(v: unknown, path: string): string[] {
    if (!Array.isArray(v)) return [this.str(v, path)];
    return v.map((s, i) => this.str(s, `${path}[${i}]`));
  }

  steps(v: unknown, path: string): Action[] {
    if (!Array.isArray(v)) {
      this.fail(path, "yaml.type", `${path} must be a list`);
      return [];
    }
    return v.map((s, i) => this.step(s, `${path}[${i}]`, i + 1));
  }

  step(s: unknown, path: string, order: number): Action {
    const a = create(ActionSchema, { order });
    if (!isMap(s)) {
      this.fail(path, "yaml.type", "a step must be a mapping");
      return a;
    }
    this.knownKeys(s, path, stepKeys);
    a.id = this.first([s, path, "name"], [s, path, "id"]);
    a.activity = this.first([s, path, "activity"], [s, path, "agent"]);
    a.queue = this.first([s, path, "queue"]);
    if (get(s, "dependsOn") !== undefined) a.dependsOn = this.strList(get(s, "dependsOn"), `${path}.dependsOn`);
    if (get(s, "onFailure") !== undefined) a.onFailure = this.onFailure(get(s, "onFailure"), `${path}.onFailure`);
    if (get(s, "timeout") !== undefined) a.timeoutMs = this.duration(get(s, "timeout"), `${path}.timeout`);
    if (get(s, "heartbeatTimeout") !== undefined) a.heartbeatTimeoutMs = this.duration(get(s, "heartbeatTimeout"), `${path}.heartbeatTimeout`);
    if (get(s, "scheduleToStartTimeout") !== undefined) {
      a.scheduleToStartTimeoutMs = this.duration(get(s, "scheduleToStartTimeout"), `${path}.scheduleToStartTimeout`);
    }
    if (get(s, "retryPolicy") !== undefined) a.retry = this.retry(get(s, "retryPolicy"), `${path}.retryPolicy`);
    if (get(s, "input") !== undefined) a.input = this.input(get(s, "input"), `${path}.input`);
    if (get(s, "manualTimeout") !== undefined) a.manualTimeoutMs = this.duration(get(s, "manualTimeout"), `${path}.manualTimeout`);
    if (get(s, "secrets") !== undefined) a.secrets = this.secrets(get(s, "secrets"), `${path}.secrets`);
    const manual = get(s, "manual");
    if (manual !== undefined) {
      if (typeof manual !== "boolean") this.fail(`${path}.manual`, "yaml.type", `${path}.manual must be true or false`);
      else if (manual) a.completionMode = CompletionMode.MANUAL;
    }
    const wait = get(s, "waitForSignal");
    if (wait !== undefined) {
      if (isMap(wait)) {
        this.knownKeys(wait, `${path}.waitForSignal`, signalWaitKeys);
        a.waitForSignal = { $typeName: "weft.v1.WaitForSignal", signalName: this.first([wait, `${path}.waitForSignal`, "name"], [wait, `${path}.waitForSignal`, "signal"]) };
        if (get(wait, "timeout") !== undefined) a.waitForSignal.timeoutMs = this.duration(get(wait, "timeout"), `${path}.waitForSignal.timeout`);
      } else if (typeof wait === "string") {
        a.waitForSignal = { $typeName: "weft.v1.WaitForSignal", signalName: wait };
      } else {
        this.fail(`${path}.waitForSignal`, "yaml.type", "waitForSignal must be a signal name or a mapping");
      }
    }
    // A step's expressions are CEL, compiled and checked by weftd (docs/semantics.md#when, #repeat, #sleep).
    if (get(s, "when") !== undefined) a.when = this.str(get(s, "when"), `${path}.when`);
    const repeat = get(s, "repeat");
    if (repeat !== undefined) {
      if (isMap(repeat)) {
        this.knownKeys(repeat, `${path}.repeat`, repeatKeys);
        a.repeat = { $typeName: "weft.v1.StepRepeat", until: this.first([repeat, `${path}.repeat`, "until"]), maxIterations: 0 };
        const n = get(repeat, "maxIterations");
        if (n !== undefined) a.repeat.maxIterations = Math.max(0, this.integer(n, `${path}.repeat.maxIterations`) ?? 0);
      } else {
        this.fail(`${path}.repeat`, "yaml.type", "repeat must be a mapping of until and maxIterations");
      }
    }
    if (get(s, "sleep") !== undefined) a.sleepMs = this.duration(get(s, "sleep"), `${path}.sleep`);
    if (get(s, "sleepUntil") !== undefined) a.sleepUntil = this.str(get(s, "sleepUntil"), `${path}.sleepUntil`);
    // A fan-out over a CEL list, checked by weftd (docs/semantics.md#for-each).
    if (get(s, "forEach") !== undefined) a.forEach = this.str(get(s, "forEach"), `${path}.forEach`);
    const mc = get(s, "maxConcurrency");
    if (mc !== undefined) {
      const n = this.integer(mc, `${path}.maxConcurrency`);
      if (n !== undefined && n < 1) this.fail(`${path}.maxConcurrency`, "for_each.max_concurrency_range", "maxConcurrency must be at least 1");
      else if (n !== undefined) a.maxConcurrency = n;
    }
    const sleeps = a.sleepMs !== undefined || a.sleepUntil !== "";
    if (!a.activity && !a.waitForSignal && a.completionMode !== CompletionMode.MANUAL && !sleeps) a.activity = a.id;
    return a;
  }

  onFailure(v: unknown, path: string): OnFailure {
    const s = this.str(v, path).toLowerCase();
    const map: Record<string, OnFailure> = { abort: OnFailure.ABORT, skip: OnFailure.SKIP, compensate: OnFailure.COMPENSATE, hold: OnFailure.HOLD };
    if (s in map) return map[s];
    this.fail(path, "yaml.on_failure", "onFailure must be one of abort, skip, compensate, hold");
    return OnFailure.UNSPECIFIED;
  }

  compensations(v: unknown, path: string, actions: Action[]): void {
    if (!Array.isArray(v)) {
      this.fail(path, "yaml.type", "compensation must be a list");
      return;
    }
    const byName = new Map<string, number>();
    actions.forEach((a, i) => {
      if (a.id && !byName.has(a.id)) byName.set(a.id, i);
    });
    const attached = new Map<number, number>();
    v.forEach((c, i) => {
      const p = `${path}[${i}]`;
      if (!isMap(c)) return this.fail(p, "yaml.type", "a compensation entry must be a mapping");
      const step = get(c, "step");
      if (step === undefined) return this.fail(`${p}.step`, "yaml.compensation_step", "a compensation entry must name the step it undoes");
      const idx = byName.get(this.str(step, `${p}.step`));
      if (idx === undefined) return this.fail(`${p}.step`, "yaml.compensation_step", "step must name a step of the definition");
      if (attached.has(idx)) return this.fail(`${p}.step`, "yaml.compensation_duplicate", `the step already has its compensation in entry ${attached.get(idx)}`);
      attached.set(idx, i);
      actions[idx].compensation = this.hook(c, p);
    });
  }

  hook(c: Obj, path: string): CompensationHook {
    this.knownKeys(c, path, compensationKeys);
    const h: CompensationHook = {
      $typeName: "weft.v1.CompensationHook",
      operation: this.first([c, path, "operation"], [c, path, "action"]),
      queue: this.first([c, path, "queue"], [c, path, "agent"]),
    } as CompensationHook;
    if (get(c, "timeout") !== undefined) h.timeoutMs = this.duration(get(c, "timeout"), `${path}.timeout`);
    if (get(c, "input") !== undefined) h.input = this.input(get(c, "input"), `${path}.input`);
    if (get(c, "retryPolicy") !== undefined) h.retry = this.retry(get(c, "retryPolicy"), `${path}.retryPolicy`);
    return h;
  }

  retry(v: unknown, path: string): RetryPolicyMsg {
    const r = { $typeName: "weft.v1.RetryPolicy", strategy: BackoffStrategy.UNSPECIFIED, retryableErrors: [] as ErrorClass[] } as RetryPolicyMsg;
    if (!isMap(v)) {
      this.fail(path, "yaml.type", "retryPolicy must be a mapping");
      return r;
    }
    this.knownKeys(v, path, retryKeys);
    const retries = get(v, "maxRetries");
    const attempts = get(v, "maxAttempts");
    if (retries !== undefined && attempts !== undefined) {
      this.fail(path, "yaml.conflict", "retryPolicy takes maxRetries or maxAttempts, not both");
    } else if (retries !== undefined) {
      const k = this.integer(retries, `${path}.maxRetries`);
      if (k !== undefined && (k < 0 || k > MAX_ATTEMPTS - 1)) {
        this.fail(`${path}.maxRetries`, "yaml.max_retries", `maxRetries must be between 0 and ${MAX_ATTEMPTS - 1}, got ${k}`);
      } else if (k !== undefined) r.maxAttempts = k + 1;
    } else if (attempts !== undefined) {
      const k = this.integer(attempts, `${path}.maxAttempts`);
      if (k !== undefined && (k < 1 || k > MAX_ATTEMPTS)) {
        this.fail(`${path}.maxAttempts`, "yaml.max_attempts", `maxAttempts must be between 1 and ${MAX_ATTEMPTS}, got ${k}`);
      } else if (k !== undefined) r.maxAttempts = k;
    }
    const backoff = get(v, "backoff");
    if (backoff !== undefined) {
      const s = this.str(backoff, `${path}.backoff`).toLowerCase();
      const map: Record<string, BackoffStrategy> = { constant: BackoffStrategy.CONSTANT, linear: BackoffStrategy.LINEAR, exponential: BackoffStrategy.EXPONENTIAL };
      if (s in map) r.strategy = map[s];
      else this.fail(`${path}.backoff`, "yaml.backoff", "backoff must be one of constant, linear, exponential");
    }
    if (get(v, "initialDelay") !== undefined) r.initialBackoffMs = this.duration(get(v, "initialDelay"), `${path}.initialDelay`);
    if (get(v, "maxDelay") !== undefined) r.maxBackoffMs = this.duration(get(v, "maxDelay"), `${path}.maxDelay`);
    for (const key of ["multiplier", "backoffMultiplier"]) {
      const m = get(v, key);
      if (m === undefined) continue;
      if (typeof m === "number" && Number.isFinite(m)) r.backoffMultiplier = m;
      else this.fail(`${path}.${key}`, "yaml.number", `${key} must be a number`);
      break;
    }
    const errs = get(v, "retryableErrors");
    if (errs !== undefined) {
      this.strList(errs, `${path}.retryableErrors`).forEach((name, i) => {
        const local = name.trim().toUpperCase().replace(/[ -]/g, "_");
        const known = ErrorClassSchema.values.find((e) => e.localName === local && e.number !== 0);
        if (known) r.retryableErrors.push(known.number as ErrorClass);
        else this.fail(`${path}.retryableErrors[${i}]`, "yaml.error_class", `retryableErrors[${i}] must be a known error class`);
      });
    }
    return r;
  }

  integer(v: unknown, path: string): number | undefined {
    if (typeof v === "number" && Number.isInteger(v) && Math.abs(v) <= 0x7fffffff) return v;
    this.fail(path, "yaml.integer", `${path} must be an integer`);
    return undefined;
  }

  /** duration reads a Go-style duration ("500ms", "5m", "1h30m") into milliseconds; a bare number is refused. */
  duration(v: unknown, path: string): number | undefined {
    if (typeof v !== "string") {
      this.fail(path, "yaml.duration", `${path} must be a duration with a unit, like "5m" or "500ms"`);
      return undefined;
    }
    const ms = parseDuration(v);
    if (ms === undefined) {
      this.fail(path, "yaml.duration", `${path} must be a duration like "5m" or "1h30m"`);
      return undefined;
    }
    if (ms > MAX_UINT32) {
      this.fail(path, "yaml.duration", `${path} is longer than the API can hold`);
      return undefined;
    }
    return ms;
  }

  input(v: unknown, path: string) {
    try {
      return fromJson(ValueSchema, toJsonValue(v));
    } catch {
      this.fail(path, "yaml.input", `${path} is not representable as JSON`);
      return undefined;
    }
  }
}

/** toJsonValue converts a parsed YAML value to JSON: dates become ISO strings, other non-JSON scalars text. */
function toJsonValue(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new RangeError("not finite");
    return v;
  }
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toJsonValue(x)]));
  if (typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJsonValue(x)]));
  return String(v);
}

const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };

/**
 * parseDuration reads a Go-style duration ("300ms", "1.5h", "2h45m") into
 * whole milliseconds; undefined when it is not one, or negative.
 */
export function parseDuration(s: string): number | undefined {
  const text = s.trim();
  if (text === "0") return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * unitMs[m[2]];
    at = re.lastIndex;
  }
  if (at === 0 || at !== text.length) return undefined;
  return Math.round(total);
}
