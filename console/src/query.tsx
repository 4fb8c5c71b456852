// A query the server refused, shown under the query box: weftd names the
// 1-based column and the problem (docs/semantics.md#run-queries), and the
// page puts a caret under that column of the query as typed.
import type { Fault } from "./api";

/** Where a refused query went wrong: the column (1-based) if weftd named one, and why. */
export interface QueryProblemAt {
  column?: number;
  message: string;
}

/**
 * queryProblem answers the problem a fault of a listing with a query names
 * in it, or undefined when the fault is not about the query: an
 * INVALID_ARGUMENT about the query, or a weftd that serves no queries
 * (CAPABILITY_UNAVAILABLE or FAILED_PRECONDITION).
 */
export function queryProblem(f: Fault, hasQuery: boolean): QueryProblemAt | undefined {
  if (!hasQuery) return undefined;
  // A weftd that cannot run queries yet (no query engine) refuses every one.
  if (f.code === "CAPABILITY_UNAVAILABLE" || f.code === "FAILED_PRECONDITION") return { message: f.message };
  if (f.code !== "INVALID_ARGUMENT") return undefined;
  const about = f.violations.find((v) => /^query\b/.test(v));
  if (!about && !/\bquery\b/i.test(f.message)) return undefined;
  // weftd's message says it in words ("invalid query: expected a value after '=' at column 14, found the end").
  // (once: weftd's message may repeat the violation after ": query: ")
  const said = f.message.split(": query: ")[0];
  const text = /column \d+/i.test(said) ? said : (about ?? said);
  const m = /column (\d+)/i.exec(text) ?? (about ? /column (\d+)/i.exec(about) : null);
  return { column: m ? Number(m[1]) : undefined, message: text };
}

/** QueryProblem shows a refused query's problem under the box, with a caret under its column. */
export function QueryProblem({ query, problem, fault }: { query: string; problem: QueryProblemAt; fault: Fault }) {
  return (
    <div class="fault" role="alert" id="query-error">
      <div>
        <span class="fault-code">{fault.code}</span> <span class="fault-message">{problem.message}</span>
      </div>
      {problem.column !== undefined && (
        <pre class="json-where" aria-hidden="true" id="query-where">
          {query}
          {"\n"}
          {" ".repeat(Math.max(0, problem.column - 1))}^
        </pre>
      )}
      {fault.correlationId && (
        <div class="fault-correlation">
          correlation id <code>{fault.correlationId}</code>
        </div>
      )}
    </div>
  );
}
