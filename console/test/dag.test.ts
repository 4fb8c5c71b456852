// The graph's edges and layout (console/src/dag.ts), as node:test cases.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { WorkflowDefinitionSchema } from "../../client/ts/src/gen/weft/v1/definition_pb";
import { dependencies, layoutDag } from "../src/dag";

const def = (dag: boolean, actions: { id: string; order: number; dependsOn?: string[] }[]) =>
  create(WorkflowDefinitionSchema, { planId: "p", planVersion: "1", dag, actions: actions.map((a) => ({ ...a, activity: "a" })) });

test("a sequential definition is a chain in order, whatever the actions' listing", () => {
  const d = def(false, [
    { id: "c", order: 3 },
    { id: "a", order: 1 },
    { id: "b", order: 2 },
  ]);
  assert.deepEqual(dependencies(d), [
    ["a", "b"],
    ["b", "c"],
  ]);
});

test("a definition with depends_on is drawn from its dependencies only", () => {
  const d = def(false, [
    { id: "a", order: 1 },
    { id: "b", order: 2 },
    { id: "c", order: 3, dependsOn: ["a", "b"] },
  ]);
  assert.deepEqual(dependencies(d), [
    ["a", "c"],
    ["b", "c"],
  ]);
});

test("a DAG without dependencies has no edges: every action is a root", () => {
  assert.deepEqual(dependencies(def(true, [{ id: "a", order: 1 }, { id: "b", order: 2 }])), []);
});

test("the layout places every action once, each dependency left of its dependant, without overlaps", () => {
  const d = def(false, [
    { id: "a", order: 1 },
    { id: "b", order: 2, dependsOn: ["a"] },
    { id: "c", order: 3, dependsOn: ["a"] },
    { id: "d", order: 4, dependsOn: ["b", "c"] },
  ]);
  const l = layoutDag(d);
  assert.deepEqual(l.nodes.map((n) => n.id).sort(), ["a", "b", "c", "d"]);
  const at = new Map(l.nodes.map((n) => [n.id, n]));
  for (const [from, to] of dependencies(d)) assert.ok(at.get(from)!.x + at.get(from)!.width <= at.get(to)!.x, `${from} left of ${to}`);
  for (const p of l.nodes)
    for (const q of l.nodes)
      if (p.id < q.id) {
        const apart = p.x + p.width <= q.x || q.x + q.width <= p.x || p.y + p.height <= q.y || q.y + q.height <= p.y;
        assert.ok(apart, `${p.id} and ${q.id} overlap`);
      }
  assert.equal(l.edges.length, 4);
  for (const n of l.nodes) assert.ok(n.x >= 0 && n.y >= 0 && n.x + n.width <= l.width && n.y + n.height <= l.height);
});
