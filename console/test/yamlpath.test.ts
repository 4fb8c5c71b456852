// yamlLine (console/src/yamlpath.ts) places weftd's YAML paths in the text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { yamlLine } from "../src/yamlpath.js";

const doc = `# a workflow
metadata:
  name: pasted
  version: "1"
spec:
  timeout: 24h
  steps:
    - name: reserve
      waitForSignal: go
    - name: ship
      dependsOn: [reserve]

      retryPolicy:
        maxRetries: 2
      timeout: soon
  compensation:
  - step: reserve
    action: release
`;

test("yamlLine answers the line of each path weftd names", () => {
  const cases: [string, number | undefined][] = [
    ["metadata.name", 3],
    ["spec.timeout", 6],
    ["spec.steps", 7],
    ["spec.steps[0]", 8],
    ["spec.steps[0].name", 8],
    ["spec.steps[0].waitForSignal", 9],
    ["spec.steps[1].timeout", 15],
    ["spec.steps[1].retryPolicy.maxRetries", 14],
    ["spec.steps[1].dependsOn[0]", 11], // inside a flow list: the key's line
    ["spec.compensation[0].action", 18],
    ["spec.steps[2].timeout", 7], // no third step: the deepest part found
    ["nothing.here", undefined],
    ["", undefined],
  ];
  for (const [path, line] of cases) assert.equal(yamlLine(doc, path), line, path);
});

test("yamlLine reads a top-level list of steps and keys beside the dash", () => {
  const top = "planId: p\nsteps:\n- name: a\n  activity: x\n- name: b\n  timeout: soon\n";
  assert.equal(yamlLine(top, "steps[1].timeout"), 6);
  assert.equal(yamlLine(top, "steps[0].activity"), 4);
  assert.equal(yamlLine(top, "planId"), 1);
});
