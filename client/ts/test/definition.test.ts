// parseDefinition and parseDuration, offline: the YAML shape `weft submit`
// reads (examples/workflow.yaml among it), the API's JSON shape, and every
// refusal naming the document path and rule without quoting the input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  BackoffStrategy,
  BackpressureMode,
  CompletionMode,
  DefinitionError,
  ErrorClass,
  OnFailure,
  fromValue,
  parseDefinition,
  parseDuration,
} from "../src/index.js";
import { repoRoot } from "./support/weftd.js";

test("the example workflow reads as a DAG with its timeouts, retries, signal, manual step and compensations", () => {
  const d = parseDefinition(readFileSync(join(repoRoot(), "examples/workflow.yaml"), "utf8"));
  assert.equal(d.planId, "order-fulfilment");
  assert.equal(d.planVersion, "1");
  assert.equal(d.dag, true);
  assert.equal(d.timeoutMs, 24 * 3600 * 1000);
  assert.deepEqual(d.actions.map((a) => [a.id, a.order, a.activity]), [
    ["reserve", 1, "reserve-inventory"],
    ["charge", 2, "charge-card"],
    ["payment-confirmed", 3, ""],
    ["approve-shipment", 4, ""],
    ["ship", 5, "ship-order"],
  ]);
  const [reserve, charge, confirmed, approve, ship] = d.actions;
  assert.deepEqual(fromValue(reserve.input), { sku: "WIDGET-1", quantity: 2 });
  assert.equal(reserve.retry?.maxAttempts, 3, "maxRetries 2 is 3 attempts");
  assert.equal(reserve.retry?.strategy, BackoffStrategy.EXPONENTIAL);
  assert.equal(reserve.retry?.initialBackoffMs, 1000);
  assert.equal(charge.heartbeatTimeoutMs, 15000);
  assert.deepEqual(charge.dependsOn, ["reserve"]);
  assert.equal(confirmed.waitForSignal?.signalName, "payment-confirmed");
  assert.equal(confirmed.waitForSignal?.timeoutMs, 3600000);
  assert.equal(approve.completionMode, CompletionMode.MANUAL);
  assert.equal(ship.onFailure, OnFailure.COMPENSATE);
  assert.equal(reserve.compensation?.operation, "release-inventory");
  assert.equal(charge.compensation?.operation, "refund-card");
});

test("a document with actions reads as the API's JSON form of WorkflowDefinition", () => {
  const d = parseDefinition(JSON.stringify({ planId: "p", planVersion: "2", actions: [{ id: "a", order: 1, activity: "x", timeoutMs: 5 }] }));
  assert.equal(d.planVersion, "2");
  assert.equal(d.dag, false);
  assert.equal(d.actions[0].timeoutMs, 5);
});

test("retryableErrors accept the specification's spelling of error classes", () => {
  const d = parseDefinition("planId: p\nsteps:\n  - name: a\n    retryPolicy: {maxAttempts: 2, retryableErrors: [Agent Error, rate-limit, TIMEOUT]}\n");
  assert.deepEqual(d.actions[0].retry?.retryableErrors, [ErrorClass.AGENT_ERROR, ErrorClass.RATE_LIMIT, ErrorClass.TIMEOUT]);
  assert.equal(d.actions[0].activity, "a", "a step without activity runs the activity named like it");
});

test("requiresApproval, maxConcurrentRuns, backpressure, manualTimeout and secrets read into the definition", () => {
  const d = parseDefinition(`
metadata: {name: p}
spec:
  requiresApproval: true
  maxConcurrentRuns: 3
  backpressure: queue
  steps:
    - name: a
      manual: true
      manualTimeout: 4h
      secrets: [{name: api, ref: vault://kv/api}]
`);
  assert.equal(d.requiresApproval, true);
  assert.equal(d.maxConcurrentRuns, 3);
  assert.equal(d.backpressure, BackpressureMode.QUEUE);
  assert.equal(d.actions[0].manualTimeoutMs, 4 * 3600 * 1000);
  assert.deepEqual(d.actions[0].secrets.map((x) => [x.name, x.ref]), [["api", "vault://kv/api"]]);
});

test("when, repeat, sleep and sleepUntil read into the definition; a sleep step has no activity", () => {
  const d = parseDefinition(`
metadata: {name: p}
spec:
  steps:
    - name: charge
      when: input.amount > 0
      input: {cents: '\${{ input.amount * 100 }}'}
    - name: poll
      repeat: {until: steps.poll.output.done, maxIterations: 5}
    - name: nap
      sleep: 10m
    - name: until
      sleepUntil: \${{ timestamp(input.at) }}
`);
  assert.equal(d.actions[0].when, "input.amount > 0");
  assert.deepEqual(fromValue(d.actions[0].input!), { cents: "${{ input.amount * 100 }}" }, "expressions are weftd's to evaluate");
  assert.equal(d.actions[1].repeat?.until, "steps.poll.output.done");
  assert.equal(d.actions[1].repeat?.maxIterations, 5);
  assert.equal(d.actions[2].sleepMs, 10 * 60 * 1000);
  assert.equal(d.actions[2].activity, "");
  assert.equal(d.actions[3].sleepUntil, "${{ timestamp(input.at) }}");
  assert.equal(d.actions[3].activity, "");
  assert.throws(() => parseDefinition("metadata: {name: p}\nspec:\n  steps:\n    - name: a\n      repeat: {untill: x, maxIterations: 2}\n"),
    (e: DefinitionError) => e.violations.some((v) => v.field === "spec.steps[0].repeat.untill"));
});

test("forEach and maxConcurrency read into the definition; maxConcurrency below 1 is refused at its path", () => {
  const d = parseDefinition(`
metadata: {name: p}
spec:
  steps:
    - name: ship
      forEach: \${{ input.lines }}
      maxConcurrency: 3
      input: {sku: '\${{ item.sku }}', at: '\${{ index }}'}
`);
  assert.equal(d.actions[0].forEach, "${{ input.lines }}");
  assert.equal(d.actions[0].maxConcurrency, 3);
  assert.equal(d.actions[0].activity, "ship");
  assert.throws(() => parseDefinition("metadata: {name: p}\nspec:\n  steps:\n    - name: a\n      forEach: '[1]'\n      maxConcurrency: 0\n"),
    (e: DefinitionError) => e.violations.some((v) => v.field === "spec.steps[0].maxConcurrency"));
});

test("top-level x- keys, keys holding anchors, apiVersion and kind are accepted and ignored", () => {
  const d = parseDefinition(`
apiVersion: weft/v1
kind: Workflow
x-defaults: {retry: 1}
common: &retry {maxRetries: 1}
planId: p
steps:
  - name: a
    retryPolicy: *retry
`);
  assert.equal(d.actions[0].retry?.maxAttempts, 2);
});

const refusals: Array<[string, string, string, string]> = [
  ["a misspelt step key", "planId: p\nsteps: [{nmae: a}]\n", "steps[0].nmae", "yaml.unknown_key"],
  ["an unknown top-level key", "planId: p\nstepz: []\n", "stepz", "yaml.unknown_key"],
  ["an unknown retryPolicy key", "planId: p\nsteps: [{name: a, retryPolicy: {tries: 2}}]\n", "steps[0].retryPolicy.tries", "yaml.unknown_key"],
  ["an unknown backpressure", "planId: p\nbackpressure: shed\nsteps: [{name: a}]\n", "backpressure", "yaml.backpressure"],
  ["not a mapping", "- a\n- b\n", "", "yaml.type"],
  ["a syntax error", "planId: [unclosed\n", "", "yaml.syntax"],
  ["a bare number as a duration", "planId: p\nsteps: [{name: a, timeout: 30}]\n", "steps[0].timeout", "yaml.duration"],
  ["a duration without a unit", "planId: p\nsteps: [{name: a, timeout: 'soon'}]\n", "steps[0].timeout", "yaml.duration"],
  ["both maxRetries and maxAttempts", "planId: p\nsteps: [{name: a, retryPolicy: {maxRetries: 1, maxAttempts: 2}}]\n", "steps[0].retryPolicy", "yaml.conflict"],
  ["too many retries", "planId: p\nsteps: [{name: a, retryPolicy: {maxRetries: 10}}]\n", "steps[0].retryPolicy.maxRetries", "yaml.max_retries"],
  ["an unknown onFailure", "planId: p\nsteps: [{name: a, onFailure: explode}]\n", "steps[0].onFailure", "yaml.on_failure"],
  ["an unknown backoff", "planId: p\nsteps: [{name: a, retryPolicy: {backoff: random}}]\n", "steps[0].retryPolicy.backoff", "yaml.backoff"],
  ["an unknown error class", "planId: p\nsteps: [{name: a, retryPolicy: {retryableErrors: [oops]}}]\n", "steps[0].retryPolicy.retryableErrors[0]", "yaml.error_class"],
  ["a compensation of no step", "planId: p\nsteps: [{name: a}]\ncompensation: [{step: b, action: undo}]\n", "compensation[0].step", "yaml.compensation_step"],
  ["two compensations of one step", "planId: p\nsteps: [{name: a}]\ncompensation: [{step: a, action: u}, {step: a, action: v}]\n", "compensation[1].step", "yaml.compensation_duplicate"],
  ["spec.steps that is not a list", "planId: p\nspec: {steps: {a: 1}}\n", "spec.steps", "yaml.type"],
];

for (const [name, text, field, ruleId] of refusals) {
  test(`a definition with ${name} is refused at ${field || "the top"} with ${ruleId}`, () => {
    assert.throws(
      () => parseDefinition(text),
      (e: unknown) => {
        assert.ok(e instanceof DefinitionError, String(e));
        assert.deepEqual(e.violations.map((v) => [v.field, v.ruleId]), [[field, ruleId]]);
        for (const secret of ["explode", "random", "oops", "soon"]) assert.ok(!e.message.includes(secret), `the message quotes the input: ${e.message}`);
        return true;
      },
    );
  });
}

test("an unknown key's refusal names the key it was probably meant to be", () => {
  assert.throws(() => parseDefinition("planId: p\nsteps: [{name: a, dependOn: [b]}]\n"), (e: unknown) => {
    assert.ok(e instanceof DefinitionError);
    assert.match(e.violations[0].message, /did you mean "dependsOn"\?/);
    return true;
  });
});

test("parseDuration reads Go-style durations into milliseconds and refuses anything else", () => {
  const table: Array<[string, number | undefined]> = [
    ["0", 0],
    ["500ms", 500],
    ["1.5s", 1500],
    ["1h30m", 5400000],
    ["2h45m10s", 9910000],
    ["1500us", 2],
    ["", undefined],
    ["5", undefined],
    ["-5s", undefined],
    ["5 s", undefined],
    ["5d", undefined],
    ["m", undefined],
  ];
  for (const [text, want] of table) assert.equal(parseDuration(text), want, JSON.stringify(text));
});

test("a step's scheduleToStartTimeout is its schedule_to_start_timeout_ms", () => {
  const d = parseDefinition("planId: p\nsteps:\n  - name: a\n    scheduleToStartTimeout: 2m\n");
  assert.equal(d.actions[0].scheduleToStartTimeoutMs, 120000);
});
