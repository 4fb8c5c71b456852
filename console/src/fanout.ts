// What the run page derives from a forEach step and its items
// (docs/semantics.md#for-each): GetRun lists each item of a fan-out as a step
// of its own (step[index], parent_step, item_index), and the forEach step
// carries fan_out, how its items stand. The page groups the items under their
// step: a filter by status and pages of items in index order, so a fan-out
// of 1,000 items is one group, never 1,000 rows drawn at once.
import { StepStatus, type FanOutProgress, type Run, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";

/** The states an item is counted in, as FanOutProgress counts them. */
export type ItemState = "succeeded" | "inFlight" | "failed" | "pending" | "cancelled";

/** The filters the group offers, in the order it shows them. */
export const ITEM_STATES: ItemState[] = ["succeeded", "inFlight", "failed", "pending", "cancelled"];

/** How the group names each state. */
export const ITEM_STATE_NAMES: Record<ItemState, string> = {
  succeeded: "succeeded",
  inFlight: "in flight",
  failed: "failed",
  pending: "pending",
  cancelled: "cancelled",
};

/** Items shown on one page of a group. */
export const ITEMS_PER_PAGE = 50;

/** isItem reports whether a step is an item of a fan-out. */
export const isItem = (s: Step): boolean => s.parentStep !== "";

/**
 * itemState answers the state an item is counted in: as the server's
 * FanOutProgress counts (a skipped item counts as cancelled; anything
 * dispatched and not ended is in flight).
 */
export function itemState(s: Step): ItemState {
  switch (s.status) {
    case StepStatus.PENDING:
      return "pending";
    case StepStatus.SUCCEEDED:
      return "succeeded";
    case StepStatus.FAILED:
      return "failed";
    case StepStatus.CANCELLED:
    case StepStatus.SKIPPED:
      return "cancelled";
    default:
      return "inFlight";
  }
}

/** topSteps answers the run's steps that are not items: one per action. */
export const topSteps = (run: Run): Step[] => run.steps.filter((s) => !isItem(s));

/** isForEach reports whether the definition makes the step a forEach step. */
export function isForEach(run: Run, actionId: string): boolean {
  return (run.definition?.actions.find((a) => a.id === actionId)?.forEach ?? "") !== "";
}

/**
 * itemsOf answers a forEach step's items in index order: those of its
 * current list (an item past fan_out.items belongs to an earlier list a
 * rerun evaluated again, and is not counted), all of them before it fanned out.
 */
export function itemsOf(run: Run, step: string): Step[] {
  const parent = run.steps.find((s) => s.actionId === step);
  const n = parent?.fanOut?.items;
  return run.steps
    .filter((s) => s.parentStep === step && (n === undefined || s.itemIndex < n))
    .sort((a, b) => a.itemIndex - b.itemIndex);
}

/** countStates counts items by state. */
export function countStates(items: Step[]): Record<ItemState, number> {
  const c: Record<ItemState, number> = { succeeded: 0, inFlight: 0, failed: 0, pending: 0, cancelled: 0 };
  for (const s of items) c[itemState(s)]++;
  return c;
}

/** The filter of a group: every item, or those in one state. */
export type ItemFilter = ItemState | "all";

/** One page of a group's items. */
export interface ItemPage {
  /** The items on the page. */
  items: Step[];
  /** The items the filter keeps, over every page. */
  matching: number;
  /** The page shown (from 0, clamped to the last) and how many pages there are (at least 1). */
  page: number;
  pages: number;
  /** The 1-based positions of the first and last item shown among the matching ones; 0 when none. */
  from: number;
  to: number;
}

/** pageOf answers page number page (from 0) of the items filter keeps. */
export function pageOf(items: Step[], filter: ItemFilter, page: number, perPage = ITEMS_PER_PAGE): ItemPage {
  const kept = filter === "all" ? items : items.filter((s) => itemState(s) === filter);
  const pages = Math.max(1, Math.ceil(kept.length / perPage));
  const p = Math.min(Math.max(0, Math.floor(page)), pages - 1);
  const shown = kept.slice(p * perPage, (p + 1) * perPage);
  return { items: shown, matching: kept.length, page: p, pages, from: shown.length ? p * perPage + 1 : 0, to: p * perPage + shown.length };
}

/**
 * progressText says how a fan-out stands, as `weft get` does: "12 of 30
 * succeeded · 5 in flight · 1 failed · 12 pending · at most 5 at once";
 * cancelled items only when there are some.
 */
export function progressText(f: FanOutProgress): string {
  const parts = [`${f.succeeded} of ${f.items} succeeded`, `${f.inFlight} in flight`, `${f.failed} failed`, `${f.pending} pending`];
  if (f.cancelled > 0) parts.push(`${f.cancelled} cancelled`);
  parts.push(`at most ${f.maxConcurrency} at once`);
  return parts.join(" · ");
}

/** progressShort fits a fan-out's progress into a graph node: "12/30 done · 5 in flight". */
export function progressShort(f: FanOutProgress): string {
  const ended = f.succeeded + f.failed + f.cancelled;
  const bad = f.failed > 0 ? ` · ${f.failed} failed` : "";
  return `${ended}/${f.items} done${bad}${f.inFlight > 0 ? ` · ${f.inFlight} in flight` : ""}`;
}
