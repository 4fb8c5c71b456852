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

test("yamlLine finds every path of random block YAML documents at the line it was written on", () => {
  // A seeded generator of nested maps and lists, written in block style at
  // random indentation steps, recording each path's line as it writes it.
  let seed = 11;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let doc = 0; doc < 500; doc++) {
    const out: string[] = [];
    const where = new Map<string, number>();
    const write = (path: string, depth: number, col: number, dashCol: number | undefined): void => {
      // a map of 1..3 keys; the first key goes on the dash's line when the map is a list item
      const keys = 1 + rand(3);
      for (let k = 0; k < keys; k++) {
        const key = `k${k}${rand(3) === 0 ? "_x" : ""}`;
        const p = path ? `${path}.${key}` : key;
        const prefix = k === 0 && dashCol !== undefined ? `${" ".repeat(dashCol)}- ` : " ".repeat(col);
        const kind = depth >= 3 ? 0 : rand(3);
        if (rand(5) === 0) out.push(""); // blank lines anywhere
        if (rand(7) === 0) out.push(`${" ".repeat(col)}# a comment`);
        if (kind === 0) {
          out.push(`${prefix}${key}: ${rand(2) ? "v" : "{a: 1}"}`);
          where.set(p, out.length);
        } else if (kind === 1) {
          out.push(`${prefix}${key}:`);
          where.set(p, out.length);
          write(p, depth + 1, col + 1 + rand(3), undefined);
        } else {
          out.push(`${prefix}${key}:`);
          where.set(p, out.length);
          const items = 1 + rand(3);
          const dash = col + rand(3); // YAML allows the dashes at the key's own column
          for (let i = 0; i < items; i++) {
            if (rand(2)) {
              out.push(`${" ".repeat(dash)}- scalar`);
              where.set(`${p}[${i}]`, out.length);
            } else {
              const before = out.length;
              write(`${p}[${i}]`, depth + 1, dash + 2, dash);
              // the item's line is the first line its map wrote that is not blank or a comment
              const first = out.slice(before).findIndex((l) => l.trim() !== "" && !l.trim().startsWith("#"));
              where.set(`${p}[${i}]`, before + first + 1);
            }
          }
        }
      }
    };
    write("", 0, 0, undefined);
    const text = out.join("\n");
    for (const [path, line] of where) {
      assert.equal(yamlLine(text, path), line, `${path} in\n${text}`);
      // A path that goes on past what the document holds answers the deepest part it has:
      // never a line of a sibling or of a later item.
      for (const more of [".k0", ".k1", ".k2", ".k1_x", "[0]", "[3]"]) {
        if (!where.has(path + more)) assert.equal(yamlLine(text, path + more), line, `${path + more} in\n${text}`);
      }
    }
  }
});
