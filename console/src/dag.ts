// The run's graph: nodes are actions, edges their dependencies, laid out by
// dagre (left to right). Only the geometry is computed here; run.tsx draws it.
import * as dagre from "@dagrejs/dagre";
import type { WorkflowDefinition } from "../../client/ts/src/gen/weft/v1/definition_pb";

/** A laid-out action. x and y are its top-left corner. */
export interface DagNode {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A laid-out dependency, as a polyline. */
export interface DagEdge {
  from: string;
  to: string;
  points: { x: number; y: number }[];
}

/** A laid-out graph and its size. */
export interface DagLayout {
  nodes: DagNode[];
  edges: DagEdge[];
  width: number;
  height: number;
}

/** The size of an action's box. */
export const NODE_WIDTH = 190;
export const NODE_HEIGHT = 54;

/**
 * dependencies answers the definition's edges: depends_on when the
 * definition is a DAG (dag set, or any action with depends_on), otherwise
 * each action after the one before it in order.
 */
export function dependencies(def: WorkflowDefinition): [string, string][] {
  const isDag = def.dag || def.actions.some((a) => a.dependsOn.length > 0);
  if (isDag) return def.actions.flatMap((a) => a.dependsOn.map((d): [string, string] => [d, a.id]));
  const ordered = [...def.actions].sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : 1));
  return ordered.slice(1).map((a, i): [string, string] => [ordered[i].id, a.id]);
}

/** layoutDag lays the definition's actions and dependencies out left to right. */
export function layoutDag(def: WorkflowDefinition): DagLayout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 48, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const a of def.actions) g.setNode(a.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const [from, to] of dependencies(def)) if (g.hasNode(from)) g.setEdge(from, to);
  dagre.layout(g);
  const nodes = g.nodes().map((id) => {
    const n = g.node(id);
    return { id, x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height };
  });
  const edges = g.edges().map((e) => ({ from: e.v, to: e.w, points: g.edge(e).points ?? [] }));
  const label = g.graph();
  return { nodes, edges, width: label.width ?? 0, height: label.height ?? 0 };
}
