// Start a run (#/start): a definition from the registry (ListDefinitions,
// GetDefinition) or pasted YAML (checked by DefinitionService.ParseDefinition,
// which names each problem by its YAML path), an input checked as JSON where
// it is typed, then SubmitRun — started at once unless asked otherwise — and
// the new run's page.
import { useEffect, useRef, useState } from "preact/hooks";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { DefinitionVersion, GetDefinitionResponse, WorkflowDefinition } from "../../client/ts/src/gen/weft/v1/definition_pb";
import { api, faultOf, type Fault } from "./api";
import { can, why } from "./me";
import { FaultView } from "./ui";
import { checkJson, type JsonProblem } from "./jsoncheck";
import { when } from "./format";
import { yamlLine } from "./yamlpath";

type Source = "registry" | "yaml";

/** How many stored versions the plan picker reads. */
const VERSIONS = 1000;

/** The plans of the registry, each with its versions as ListDefinitions orders them. */
function byPlan(versions: DefinitionVersion[]): Map<string, DefinitionVersion[]> {
  const out = new Map<string, DefinitionVersion[]>();
  for (const v of versions) out.set(v.planId, [...(out.get(v.planId) ?? []), v]);
  return out;
}

/** InputProblem shows where an input stops being JSON: the line, and a caret under the column. */
function InputProblem({ text, problem }: { text: string; problem: JsonProblem }) {
  const line = text.split("\n")[problem.line - 1] ?? "";
  return (
    <div class="fault" role="alert" id="input-error">
      <div>
        <span class="fault-code">INVALID_ARGUMENT</span>{" "}
        <span class="fault-message">
          input is not JSON: line {problem.line}, column {problem.column}: {problem.message}
        </span>
      </div>
      <pre class="json-where" aria-hidden="true">
        {line}
        {"\n"}
        {" ".repeat(problem.column - 1)}^
      </pre>
    </div>
  );
}

/** YAMLWhere says on which line of the pasted YAML each refused path is, and moves the cursor there. */
function YAMLWhere({ yaml, fault, textarea }: { yaml: string; fault: Fault; textarea: () => HTMLTextAreaElement | null }) {
  const places = fault.violations
    .map((v) => {
      const path = v.slice(0, v.indexOf(": "));
      return { path, line: path && path !== "yaml" ? yamlLine(yaml, path) : undefined };
    })
    .filter((p): p is { path: string; line: number } => p.line !== undefined);
  if (places.length === 0) return null;
  const go = (line: number) => {
    const t = textarea();
    if (!t) return;
    const lines = yaml.split("\n");
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    t.focus();
    t.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  };
  return (
    <ul class="yaml-where" id="yaml-where">
      {places.map((p) => (
        <li key={p.path}>
          <span class="mono">{p.path}</span> is on{" "}
          <button type="button" class="link" data-line={p.line} onClick={() => go(p.line)}>
            line {p.line}
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Steps lists a definition's steps in order, with what each runs. */
function Steps({ def }: { def: WorkflowDefinition }) {
  return (
    <ol class="def-steps">
      {[...def.actions]
        .sort((a, b) => a.order - b.order)
        .map((a) => (
          <li key={a.id}>
            <span class="mono">{a.id}</span>{" "}
            <span class="muted">
              {a.waitForSignal ? `waits for signal ${a.waitForSignal.signalName}` : a.activity || "manual"}
              {a.dependsOn.length > 0 ? ` · after ${a.dependsOn.join(", ")}` : ""}
            </span>
          </li>
        ))}
    </ol>
  );
}

/** StartPage submits a run. */
export function StartPage() {
  const [source, setSource] = useState<Source>("registry");
  const [versions, setVersions] = useState<DefinitionVersion[] | undefined>();
  const [listFault, setListFault] = useState<Fault | undefined>();
  const [plan, setPlan] = useState("");
  const [version, setVersion] = useState(""); // "" is the plan's latest
  const [stored, setStored] = useState<GetDefinitionResponse | undefined>();
  const [storedFault, setStoredFault] = useState<Fault | undefined>();
  const [yaml, setYaml] = useState("");
  const [parsed, setParsed] = useState<{ yaml: string; def: WorkflowDefinition } | undefined>();
  const [yamlFault, setYamlFault] = useState<Fault | undefined>();
  const [input, setInput] = useState("");
  const [startNow, setStartNow] = useState(true);
  const [busy, setBusy] = useState(false);
  const [submitFault, setSubmitFault] = useState<Fault | undefined>();
  // One run_request_id per distinct submission, so that a retried click
  // (an answer lost to the network, a double click) answers the same run.
  const request = useRef<{ key: string; id: string } | undefined>(undefined);
  const yamlBox = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    api.definitions.listDefinitions({ pageSize: VERSIONS }).then(
      (res) => {
        setVersions(res.versions);
        if (res.versions.length === 0) setSource("yaml");
        else setPlan((p) => p || res.versions[0].planId);
      },
      (e) => setListFault(faultOf(e)),
    );
  }, []);

  useEffect(() => {
    if (!plan) return;
    let gone = false;
    setStored(undefined);
    setStoredFault(undefined);
    api.definitions.getDefinition({ ref: { planId: plan, planVersion: version } }).then(
      (res) => !gone && setStored(res),
      (e) => !gone && setStoredFault(faultOf(e)),
    );
    return () => {
      gone = true;
    };
  }, [plan, version]);

  const inputProblem = input.trim() === "" ? undefined : checkJson(input);
  const plans = byPlan(versions ?? []);

  /** check asks weftd to read the YAML; it answers the definition or names each problem. */
  const check = async (): Promise<WorkflowDefinition | undefined> => {
    if (parsed && parsed.yaml === yaml) return parsed.def;
    setYamlFault(undefined);
    setParsed(undefined);
    try {
      const res = await api.definitions.parseDefinition({ yaml });
      if (!res.definition) return undefined;
      setParsed({ yaml, def: res.definition });
      return res.definition;
    } catch (e) {
      setYamlFault(faultOf(e));
      return undefined;
    }
  };

  const submit = async () => {
    if (inputProblem) return;
    setBusy(true);
    setSubmitFault(undefined);
    try {
      const def = source === "yaml" ? await check() : undefined;
      if (source === "yaml" && !def) return;
      const key = JSON.stringify([source, source === "yaml" ? yaml : `${plan}@${version}`, input, startNow]);
      if (request.current?.key !== key) request.current = { key, id: `console-${crypto.randomUUID()}` };
      const res = await api.runs.submitRun({
        ...(def ? { definition: def } : { definitionRef: { planId: plan, planVersion: version } }),
        input: input.trim() === "" ? undefined : fromJson(ValueSchema, JSON.parse(input)),
        start: startNow,
        runRequestId: request.current.id,
      });
      if (res.run) location.hash = `#/runs/${encodeURIComponent(res.run.runId)}`;
    } catch (e) {
      const f = faultOf(e);
      // A refusal of the definition belongs beside it.
      if (source === "yaml" && f.violations.some((v) => v.startsWith("definition"))) setYamlFault(f);
      else setSubmitFault(f);
    } finally {
      setBusy(false);
    }
  };

  const allowed = can("runs.submit");
  const ready = source === "yaml" ? yaml.trim() !== "" : !!stored;
  return (
    <main class="page start">
      <h1>Start a run</h1>
      <form
        class="start-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <fieldset class="source">
          <legend>Definition</legend>
          <label class="check">
            <input type="radio" name="source" id="source-registry" checked={source === "registry"} onChange={() => setSource("registry")} />
            From the registry
          </label>
          <label class="check">
            <input type="radio" name="source" id="source-yaml" checked={source === "yaml"} onChange={() => setSource("yaml")} />
            Paste YAML
          </label>
        </fieldset>

        {source === "registry" && (
          <section class="panel" id="registry">
            {listFault && <FaultView fault={listFault} />}
            {versions && versions.length === 0 && <p class="muted">The registry holds no definitions yet (weft definition put FILE stores one).</p>}
            {versions && versions.length > 0 && (
              <div class="row">
                <label>
                  Plan
                  <select
                    id="start-plan"
                    value={plan}
                    onChange={(e) => {
                      setPlan(e.currentTarget.value);
                      setVersion("");
                    }}
                  >
                    {[...plans.keys()].map((p) => (
                      <option key={p} value={p}>
                        {p}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  Version
                  <select id="start-version" value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
                    <option value="">latest ({plans.get(plan)?.find((v) => v.latest)?.planVersion ?? "?"})</option>
                    {(plans.get(plan) ?? []).map((v) => (
                      <option key={v.planVersion} value={v.planVersion}>
                        {v.planVersion}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
            )}
            {storedFault && <FaultView fault={storedFault} />}
            {stored?.version && stored.definition && (
              <div id="stored-definition">
                <p>
                  <strong>{stored.version.displayName || stored.version.planId}</strong>{" "}
                  <span class="muted">
                    {stored.version.planId}@{stored.version.planVersion} · {stored.version.actionCount} step{stored.version.actionCount === 1 ? "" : "s"} · stored by {stored.version.createdBy} {when(stored.version.createdAt)}
                  </span>
                </p>
                <Steps def={stored.definition} />
              </div>
            )}
          </section>
        )}

        {source === "yaml" && (
          <section class="panel" id="yaml">
            <label>
              Workflow (YAML, the shape of docs/definitions.md)
              <textarea
                id="start-yaml"
                ref={yamlBox}
                rows={12}
                class="mono"
                spellcheck={false}
                value={yaml}
                aria-invalid={yamlFault ? "true" : undefined}
                onInput={(e) => {
                  setYaml(e.currentTarget.value);
                  setYamlFault(undefined);
                }}
                placeholder={"metadata:\n  name: my-plan\n  version: \"1\"\nspec:\n  steps:\n    - name: first\n      activity: do-something"}
              />
            </label>
            <div class="row">
              <button type="button" id="start-check" disabled={yaml.trim() === ""} onClick={() => check()}>
                Check
              </button>
              {parsed && parsed.yaml === yaml && (
                <span class="ok" id="yaml-ok">
                  ✓ {parsed.def.planId}@{parsed.def.planVersion}, {parsed.def.actions.length} step{parsed.def.actions.length === 1 ? "" : "s"}
                </span>
              )}
            </div>
            {yamlFault && (
              <div id="yaml-fault">
                <FaultView fault={yamlFault} />
                <YAMLWhere yaml={yaml} fault={yamlFault} textarea={() => yamlBox.current} />
              </div>
            )}
            {parsed && parsed.yaml === yaml && <Steps def={parsed.def} />}
          </section>
        )}

        <section class="panel">
          <label>
            Input (JSON, optional: handed to every task)
            <textarea
              id="start-input"
              rows={5}
              class="mono"
              spellcheck={false}
              value={input}
              aria-invalid={inputProblem ? "true" : undefined}
              onInput={(e) => setInput(e.currentTarget.value)}
              placeholder='{"order": "A-1001"}'
            />
          </label>
          {inputProblem && <InputProblem text={input} problem={inputProblem} />}
          <label class="check">
            <input id="start-now" type="checkbox" checked={startNow} onChange={(e) => setStartNow(e.currentTarget.checked)} />
            Start it at once (otherwise it waits PENDING until it is started)
          </label>
        </section>

        <div class="row submit-row">
          <button type="submit" class="primary" id="start-submit" disabled={!allowed || busy || !ready || !!inputProblem}>
            {startNow ? "Submit and start" : "Submit"}
          </button>
          <a href="#/">Back to the runs</a>
        </div>
        {!allowed && <p class="gated">{why("runs.submit")}</p>}
        {submitFault && (
          <div id="submit-fault">
            <FaultView fault={submitFault} />
          </div>
        )}
      </form>
    </main>
  );
}
