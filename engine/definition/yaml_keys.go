package definition

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// YAMLKey is one key of the YAML shape: what it sets, and a whole
// definition that uses it.
type YAMLKey struct {
	Name    string // the key, e.g. "dependsOn"
	Means   string // what it sets, in a sentence or two (Markdown)
	Example string // a whole definition using the key; LoadYAML reads it
}

// YAMLKeyGroup is the keys one mapping of the shape may hold.
type YAMLKeyGroup struct {
	Path  string // where the mapping is, e.g. "steps[]"
	About string // what the mapping is
	Keys  []YAMLKey
}

// YAMLKeys answers the key table: every key of every mapping of the YAML
// shape, in the order docs/definitions.md lists them (the table is that
// page's source: go run ./tools/yamlkeys docs/definitions.md).
func YAMLKeys() []YAMLKeyGroup { return yamlKeyGroups }

// The keys each mapping of the YAML shape may hold (LoadYAML's doc comment
// shows what each means). A key not listed is refused with its path and, when
// one is close, the key it was probably meant to be; "input" values are
// free-form and never checked. At the top level, a key starting with "x-",
// or one whose value defines an anchor (&name), holds shared YAML for aliases
// and is ignored.
var (
	definitionKeys     = keyNames(yamlKeyGroups[0])
	metadataKeys       = keyNames(yamlKeyGroups[1])
	specKeys           = keyNames(yamlKeyGroups[2])
	stepKeys           = keyNames(yamlKeyGroups[3])
	retryKeys          = keyNames(yamlKeyGroups[4])
	signalWaitKeys     = keyNames(yamlKeyGroups[5])
	secretKeys         = keyNames(yamlKeyGroups[6])
	compensationKeys   = keyNames(yamlKeyGroups[7])
	repeatKeys         = keyNames(yamlKeyGroups[8])
	concurrencyKeys    = keyNames(yamlKeyGroups[9])
	throttleKeys       = keyNames(yamlKeyGroups[10])
	runConcurrencyKeys = keyNames(yamlKeyGroups[12])
	fairnessKeys       = keyNames(yamlKeyGroups[13])
)

func keyNames(g YAMLKeyGroup) []string {
	names := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		names[i] = k.Name
	}
	return names
}

// yamlKeyGroups is the key table. Its order is fixed: the variables above
// index it.
var yamlKeyGroups = []YAMLKeyGroup{
	{Path: "(top level)", About: "The document: a mapping. `apiVersion` and `kind` are accepted and ignored; a key starting with `x-`, or one whose value defines an anchor (`&name`), holds shared YAML for aliases and is ignored.", Keys: []YAMLKey{
		{"apiVersion", "Accepted and ignored, so that a manifest-style file loads.", "apiVersion: weft/v1\nkind: Workflow\nplanId: nightly-report\nsteps:\n  - name: build-report\n"},
		{"kind", "Accepted and ignored.", "kind: Workflow\nplanId: nightly-report\nsteps:\n  - name: build-report\n"},
		{"metadata", "A mapping of `name`, `version` and `displayName` (below): the plan's identity, manifest style.", "metadata:\n  name: nightly-report\n  version: \"3\"\nsteps:\n  - name: build-report\n"},
		{"spec", "A mapping of the run's shape (below); a key under `spec` wins over the same key at the top level.", "planId: nightly-report\nspec:\n  timeout: 1h\n  steps:\n    - name: build-report\n"},
		{"planId", "The plan's id (`plan_id`). The first present of `planId`, `metadata.name` and `name` wins.", "planId: nightly-report\nsteps:\n  - name: build-report\n"},
		{"name", "The plan's id, like `planId`.", "name: nightly-report\nsteps:\n  - name: build-report\n"},
		{"planVersion", "The plan's version (`plan_version`, default `\"1\"`). The first present of `planVersion`, `version` and `metadata.version` wins.", "planId: nightly-report\nplanVersion: \"2\"\nsteps:\n  - name: build-report\n"},
		{"version", "The plan's version, like `planVersion`.", "planId: nightly-report\nversion: \"2\"\nsteps:\n  - name: build-report\n"},
		{"displayName", "A name for people (`display_name`), shown by the console.", "planId: nightly-report\ndisplayName: Nightly sales report\nsteps:\n  - name: build-report\n"},
		{"timeout", "The workflow timeout: the run fails when it has not finished this long after it started. A Go duration (`500ms`, `5m`, `1h30m`).", "planId: nightly-report\ntimeout: 2h\nsteps:\n  - name: build-report\n"},
		{"steps", "The steps, a list of mappings (below). They form a DAG: a step without `dependsOn` is a root and starts at once.", "planId: nightly-report\nsteps:\n  - name: extract\n  - name: build-report\n    dependsOn: [extract]\n"},
		{"compensation", "Compensation hooks, a list of mappings (below): what undoes a succeeded step when a later one fails with `onFailure: compensate`, or on `weft cancel --compensate`.", "planId: order\nsteps:\n  - name: charge\n  - name: ship\n    dependsOn: [charge]\n    onFailure: compensate\ncompensation:\n  - step: charge\n    operation: refund\n"},
		{"requiresApproval", "The run waits PENDING until `weft approve` (ApproveRun), then `weft start`.", "planId: deploy\nrequiresApproval: true\nsteps:\n  - name: roll-out\n"},
		{"maxConcurrentRuns", "At most this many runs of the plan are active at once; `backpressure` says what happens to more.", "planId: nightly-report\nmaxConcurrentRuns: 5\nbackpressure: queue\nsteps:\n  - name: build-report\n"},
		{"priority", "The priority of the runs' tasks, 1 (handed out first) to 5 (default 3): every queue hands out ready tasks in priority order, oldest first within one; `weft submit --priority` overrides it per run (docs/semantics.md#priority).", "planId: vip-orders\npriority: 1\nsteps:\n  - name: ship\n"},
		{"concurrency", "At most `limit` runs of the plan with the same key started (RUNNING, BLOCKED, PAUSED or COMPENSATING) at once; `strategy` says what a run that finds its key full does: a mapping (below; docs/semantics.md#run-concurrency).", "# input: {\"customer\": \"acme\"}\nplanId: charge\nconcurrency:\n  key: input.customer\n  limit: 2\nsteps:\n  - name: charge\n"},
		{"fairness", "Shares each priority of a queue among the runs' tasks' fairness keys by weight, so that one key with a deep backlog never starves the others: a mapping of `key` and `weight` (below; docs/semantics.md#fairness).", "# input: {\"tenant\": \"acme\"}\nplanId: p\nfairness:\n  key: input.tenant\n  weight: 2\nsteps:\n  - name: a\n"},
		{"backpressure", "What a start beyond a limit does: `reject` (refused), `queue` (QUEUED until a slot frees) or `delay` (docs/semantics.md#backpressure).", "planId: nightly-report\nmaxConcurrentRuns: 1\nbackpressure: reject\nsteps:\n  - name: build-report\n"},
		{"result", "The step whose output is the run's result (`result_action_id`; `Run.result`).", "planId: quote\nresult: price\nsteps:\n  - name: price\n"},
		{"retention", "How long a finished run is kept before it is removed with its records (`retention_ms`; default: weftd's `--retention`).", "planId: nightly-report\nretention: 720h\nsteps:\n  - name: build-report\n"},
		{"searchAttributes", "Search attributes every run is given at submission (`search_attributes`; docs/semantics.md#search-attributes), by name: a `${{ }}` expression over `input` and `run.id` (`${{ input.customer }}`) whose value's type is the attribute's (a string is a keyword, then int, double, bool, timestamp), a number or a bool (that value), or other text (a keyword). It is evaluated when the run is submitted; a submission's attribute of the same name wins.", "planId: order-fulfilment\nsearchAttributes:\n  ticket: ${{ \"T-\" + run.id }}\n  priority: 2\n  channel: web\nsteps:\n  - name: charge\n"},
	}},
	{Path: "metadata", About: "The plan's identity, manifest style.", Keys: []YAMLKey{
		{"name", "The plan's id, like `planId`.", "metadata:\n  name: nightly-report\nsteps:\n  - name: build-report\n"},
		{"version", "The plan's version, like `planVersion`.", "metadata:\n  name: nightly-report\n  version: \"4\"\nsteps:\n  - name: build-report\n"},
		{"displayName", "A name for people, like the top-level `displayName`.", "metadata:\n  name: nightly-report\n  displayName: Nightly sales report\nsteps:\n  - name: build-report\n"},
	}},
	{Path: "spec", About: "The run's shape; each key means what the top-level key of the same name means, and wins over it.", Keys: []YAMLKey{
		{"timeout", "The workflow timeout.", "planId: p\nspec:\n  timeout: 30m\n  steps:\n    - name: a\n"},
		{"steps", "The steps.", "planId: p\nspec:\n  steps:\n    - name: a\n"},
		{"compensation", "Compensation hooks.", "planId: p\nspec:\n  steps:\n    - name: a\n  compensation:\n    - step: a\n      operation: undo-a\n"},
		{"requiresApproval", "Approval before the start.", "planId: p\nspec:\n  requiresApproval: true\n  steps:\n    - name: a\n"},
		{"maxConcurrentRuns", "The plan's concurrency limit.", "planId: p\nspec:\n  maxConcurrentRuns: 2\n  steps:\n    - name: a\n"},
		{"priority", "The runs' tasks' priority.", "planId: p\nspec:\n  priority: 2\n  steps:\n    - name: a\n"},
		{"concurrency", "The runs' concurrency limit per key.", "# input: {\"customer\": \"acme\"}\nplanId: p\nspec:\n  concurrency: {key: input.customer, limit: 1}\n  steps:\n    - name: a\n"},
		{"fairness", "The runs' tasks' fairness.", "# input: {\"tenant\": \"acme\"}\nplanId: p\nspec:\n  fairness: {key: input.tenant}\n  steps:\n    - name: a\n"},
		{"backpressure", "What a start beyond a limit does.", "planId: p\nspec:\n  maxConcurrentRuns: 2\n  backpressure: queue\n  steps:\n    - name: a\n"},
		{"result", "The step whose output is the run's result.", "planId: p\nspec:\n  result: a\n  steps:\n    - name: a\n"},
		{"retention", "How long a finished run is kept.", "planId: p\nspec:\n  retention: 24h\n  steps:\n    - name: a\n"},
		{"searchAttributes", "Search attributes every run is given.", "planId: p\nspec:\n  searchAttributes:\n    region: eu\n  steps:\n    - name: a\n"},
	}},
	{Path: "steps[]", About: "One step (an action). A step runs an activity on a worker, waits for a signal (`waitForSignal`), waits for a person (`manual: true`) or sleeps (`sleep`, `sleepUntil`).", Keys: []YAMLKey{
		{"name", "The step's id (`action_id`), unique in the workflow; `weft get`, `dependsOn` and `result` name steps by it.", "planId: p\nsteps:\n  - name: charge-card\n"},
		{"id", "The step's id, like `name`.", "planId: p\nsteps:\n  - id: charge-card\n"},
		{"activity", "The activity a worker registers and runs (default: the step's name, unless the step is manual, waits for a signal or sleeps).", "planId: p\nsteps:\n  - name: charge\n    activity: payments.charge\n"},
		{"agent", "The activity, like `activity`.", "planId: p\nsteps:\n  - name: charge\n    agent: payments.charge\n"},
		{"queue", "The task queue the step's tasks go to (default `default`); workers poll queues.", "planId: p\nsteps:\n  - name: render\n    queue: gpu\n"},
		{"dependsOn", "The steps that must finish first: a list, or one name.", "planId: p\nsteps:\n  - name: extract\n  - name: load\n    dependsOn: extract\n"},
		{"onFailure", "What a failure after the step's retries does: `abort` (the run fails; the default), `skip`, `compensate` (undo the succeeded steps, then fail) or `hold` (the run waits BLOCKED for `weft retry-step` or `weft skip-step`).", "planId: p\nsteps:\n  - name: publish\n    onFailure: hold\n"},
		{"timeout", "How long one attempt may run (`timeout_ms`).", "planId: p\nsteps:\n  - name: render\n    timeout: 5m\n"},
		{"heartbeatTimeout", "How long an attempt may go without a heartbeat before it times out.", "planId: p\nsteps:\n  - name: render\n    timeout: 1h\n    heartbeatTimeout: 30s\n"},
		{"scheduleToStartTimeout", "How long a task may wait for a worker before its attempt fails `SCHEDULE_TO_START` (default: weftd's `--schedule-to-start-timeout`, 5m).", "planId: p\nsteps:\n  - name: render\n    scheduleToStartTimeout: 2m\n"},
		{"retryPolicy", "How failed attempts are retried: a mapping (below).", "planId: p\nsteps:\n  - name: charge\n    retryPolicy:\n      maxAttempts: 5\n      backoff: exponential\n"},
		{"input", "The step's input: any YAML, passed to the activity as JSON. A string that is exactly `${{ <CEL> }}` is replaced by the expression's value (typed JSON) when the step's first task is created, and every later attempt uses that value (docs/semantics.md#input-expressions); `$${{ x }}` is the literal text `${{ x }}`.", "planId: p\nsteps:\n  - name: quote\n  - name: send-email\n    dependsOn: quote\n    input:\n      to: '${{ input.customer.email }}'\n      total: '${{ steps.quote.output.total }}'\n      template: nightly\n"},
		{"manual", "`true`: a person completes the step (`weft complete RUN STEP --token T --actor NAME`); it has no activity.", "planId: p\nsteps:\n  - name: approve-shipment\n    manual: true\n"},
		{"manualTimeout", "How long a person may take to complete a manual step.", "planId: p\nsteps:\n  - name: approve-shipment\n    manual: true\n    manualTimeout: 4h\n"},
		{"waitForSignal", "The step waits for a signal of this name (`weft signal RUN NAME`) and completes with its payload: a name, or a mapping (below).", "planId: p\nsteps:\n  - name: payment-confirmed\n    waitForSignal: payment-confirmed\n"},
		{"secrets", "Secret references (never values) handed to the worker: a list of mappings (below).", "planId: p\nsteps:\n  - name: deploy\n    secrets:\n      - name: token\n        ref: vault://deploy/token\n"},
		{"when", "A CEL bool, evaluated when the step becomes ready: `false` skips it with reason `condition` (docs/semantics.md#when). It reads `input`, `run.id` and `steps.<id>.output` of the steps upstream.", "planId: p\nsteps:\n  - name: charge\n    when: input.amount > 0\n"},
		{"repeat", "Runs the step (an activity or a sub-workflow) again until a condition over its own output holds: a mapping (below, docs/semantics.md#repeat).", "planId: p\nsteps:\n  - name: poll\n    repeat:\n      until: steps.poll.output.done\n      maxIterations: 20\n"},
		{"sleep", "Makes the step a durable sleep of this long (a duration): it completes when the time comes, across restarts (docs/semantics.md#sleep).", "planId: p\nsteps:\n  - name: cool-down\n    sleep: 10m\n"},
		{"sleepUntil", "Makes the step a durable sleep until the time a CEL timestamp expression answers (docs/semantics.md#sleep).", "planId: p\nsteps:\n  - name: wait-for-nine\n    sleepUntil: ${{ timestamp(input.notBefore) }}\n"},
		{"concurrency", "At most `limit` of the step's tasks with the same key in flight (claimed and not reported) at once, across every run of the plan, or of the tenant with `scope: tenant`: a mapping (below; docs/semantics.md#step-concurrency).", "# input: {\"customer\": \"acme\"}\nplanId: p\nsteps:\n  - name: charge\n    concurrency:\n      key: input.customer\n      limit: 2\n"},
		{"throttle", "The step's tasks with the same key are handed out at most at `rate`; excess tasks wait, none is dropped: a mapping (below; docs/semantics.md#step-throttle).", "planId: p\nsteps:\n  - name: charge\n    throttle:\n      key: \"'payments'\"\n      rate: 100/1m\n      scope: tenant\n"},
		{"fairness", "The step's own fairness, replacing the top-level `fairness` for its tasks: a mapping of `key` and `weight` (below).", "# input: {\"tenant\": \"acme\"}\nplanId: p\nsteps:\n  - name: a\n    fairness: {key: input.tenant, weight: 3}\n"},
		{"workflow", "The step starts a child run and finishes with its result (the child's `result` step's output) or fails with its error: a stored definition (`plan`, `version`) or an inline one (`steps`), and the child's `input` (below; docs/semantics.md#sub-workflows).", "planId: order\nsteps:\n  - name: refund\n    workflow:\n      plan: refund\n      version: \"2\"\n      input: {reason: cancelled}\n"},
		{"forEach", "Fans the step out over a list: a CEL list expression (bare or `${{ }}`) evaluated when the step becomes ready, one item per element, each run as the step would be (its activity or its `workflow`), with its own attempts, retries and timeouts, addressed `step[index]`; the item's `input` reads `item` and `index`, and the step's output is the list of the items' outputs in order (docs/semantics.md#for-each).", "planId: p\nsteps:\n  - name: ship\n    forEach: \"[1, 2, 3]\"\n    input:\n      line: ${{ item }}\n      position: ${{ index }}\n"},
		{"maxConcurrency", "At most this many items of a `forEach` step in flight at once (default 10, at least 1).", "planId: p\nsteps:\n  - name: ship\n    forEach: \"[1, 2, 3]\"\n    maxConcurrency: 2\n"},
		{"parentClose", "What the child run of a `workflow` step does when the parent stops waiting for it (the parent is cancelled or fails, or the step is cancelled): `cancel` (the default) or `abandon` (it runs on).", "planId: order\nsteps:\n  - name: audit\n    parentClose: abandon\n    workflow:\n      plan: audit-trail\n"},
	}},
	{Path: "steps[].retryPolicy", About: "How a step's failed attempts are retried.", Keys: []YAMLKey{
		{"maxRetries", "Retries after the first attempt (`maxRetries: n` is `max_attempts` n+1).", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      maxRetries: 2\n"},
		{"maxAttempts", "Attempts in all, the first included.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      maxAttempts: 3\n"},
		{"backoff", "How the delay grows: `constant`, `linear` or `exponential`.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      backoff: linear\n"},
		{"initialDelay", "The delay before the first retry.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      initialDelay: 2s\n"},
		{"maxDelay", "The longest delay between retries.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      initialDelay: 1s\n      maxDelay: 1m\n"},
		{"multiplier", "The exponential backoff's factor.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      backoff: exponential\n      multiplier: 3\n"},
		{"backoffMultiplier", "The factor, like `multiplier`.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      backoff: exponential\n      backoffMultiplier: 1.5\n"},
		{"retryableErrors", "The error classes that are retried (docs/semantics.md lists them), lower case.", "planId: p\nsteps:\n  - name: a\n    retryPolicy:\n      retryableErrors: [timeout, transient]\n"},
	}},
	{Path: "steps[].waitForSignal", About: "The mapping form of a signal wait.", Keys: []YAMLKey{
		{"name", "The signal's name.", "planId: p\nsteps:\n  - name: go-ahead\n    waitForSignal:\n      name: go\n"},
		{"signal", "The signal's name, like `name`.", "planId: p\nsteps:\n  - name: go-ahead\n    waitForSignal:\n      signal: go\n"},
		{"timeout", "How long the step waits for the signal.", "planId: p\nsteps:\n  - name: go-ahead\n    waitForSignal:\n      name: go\n      timeout: 1h\n"},
	}},
	{Path: "steps[].secrets[]", About: "One secret reference.", Keys: []YAMLKey{
		{"name", "The name the activity reads the secret by.", "planId: p\nsteps:\n  - name: deploy\n    secrets:\n      - name: api-key\n        ref: env://API_KEY\n"},
		{"ref", "Where the worker finds the secret; Weft never sees its value.", "planId: p\nsteps:\n  - name: deploy\n    secrets:\n      - name: api-key\n        ref: vault://kv/api-key\n"},
	}},
	{Path: "compensation[]", About: "One compensation hook: what undoes a succeeded step.", Keys: []YAMLKey{
		{"step", "The step the hook undoes.", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: release\n"},
		{"operation", "The compensation operation a worker registers.", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: inventory.release\n"},
		{"action", "The operation, like `operation`.", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    action: inventory.release\n"},
		{"queue", "The queue of the hook's tasks (default: the step's queue).", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: release\n    queue: inventory\n"},
		{"agent", "The queue, like `queue`.", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: release\n    agent: inventory\n"},
		{"input", "The hook's input, any YAML. A string that is exactly `${{ <CEL> }}` is replaced by the expression's value when the hook starts (over `input`, `run.id` and `steps.<id>.output` of the step it undoes and those upstream of it; a forEach step's items' hooks also read `item` and `index`, and their step's output is the item's own), and every attempt of the hook uses that value (docs/semantics.md#compensation-input).", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: release\n    input: {reason: rollback, hold: '${{ steps.reserve.output.hold }}'}\n"},
		{"timeout", "How long one attempt of the hook may run.", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: release\n    timeout: 30s\n"},
		{"retryPolicy", "How the hook's failed attempts are retried, as for steps.", "planId: p\nsteps:\n  - name: reserve\ncompensation:\n  - step: reserve\n    operation: release\n    retryPolicy: {maxAttempts: 5}\n"},
	}},
	{Path: "steps[].repeat", About: "A step's bounded loop: each iteration is a new logical attempt.", Keys: []YAMLKey{
		{"until", "A CEL bool over the last iteration's output (`steps.<id>.output` of the step itself): when it holds, the step succeeds with that output.", "planId: p\nsteps:\n  - name: poll\n    repeat:\n      until: steps.poll.output.status == 'done'\n      maxIterations: 10\n"},
		{"maxIterations", "The most iterations (required, 1–1000); when the last one's output does not satisfy `until`, the step fails.", "planId: p\nsteps:\n  - name: poll\n    repeat:\n      until: steps.poll.output.done\n      maxIterations: 5\n"},
	}},
	{Path: "steps[].concurrency", About: "A step's concurrency limit per key (docs/semantics.md#step-concurrency).", Keys: []YAMLKey{
		{"key", "A CEL expression answering a string — over `input`, `steps.<id>.output` of upstream steps and `run.id` — evaluated when the step's task is created; tasks with the same key share the limit.", "# input: {\"customer\": \"acme\"}\nplanId: p\nsteps:\n  - name: charge\n    concurrency:\n      key: input.customer\n      limit: 1\n"},
		{"limit", "The most tasks of one key in flight at once, 1–100000.", "# input: {\"customer\": \"acme\"}\nplanId: p\nsteps:\n  - name: charge\n    concurrency:\n      key: input.customer\n      limit: 2\n"},
		{"scope", "Who shares the key: `plan` (every run of the plan; the default) or `tenant` (every plan of the tenant naming the same key).", "planId: p\nsteps:\n  - name: charge\n    concurrency:\n      key: \"'psp'\"\n      limit: 10\n      scope: tenant\n"},
	}},
	{Path: "steps[].throttle", About: "A step's dispatch rate per key (docs/semantics.md#step-throttle).", Keys: []YAMLKey{
		{"key", "A CEL expression answering a string, like `concurrency.key`; tasks with the same key share the rate.", "# input: {\"provider\": \"psp\"}\nplanId: p\nsteps:\n  - name: call\n    throttle:\n      key: input.provider\n      rate: 10/s\n"},
		{"rate", "`<count>/<period>`: at most count tasks per period (units s, m, h, d; `100/1m`, `20/s`), count 1–1000000, period 1s–1d.", "planId: p\nsteps:\n  - name: call\n    throttle:\n      key: \"'psp'\"\n      rate: 100/1m\n"},
		{"burst", "How many tasks may go at once after a quiet spell, 1–10000 (default 1).", "planId: p\nsteps:\n  - name: call\n    throttle:\n      key: \"'psp'\"\n      rate: 20/s\n      burst: 5\n"},
		{"scope", "Who shares the key's rate: `plan` (the default) or `tenant`.", "planId: p\nsteps:\n  - name: call\n    throttle:\n      key: \"'psp'\"\n      rate: 100/1m\n      scope: tenant\n"},
	}},
	{Path: "steps[].workflow", About: "A step's child run: a stored definition (`plan`, `version`) or an inline one (`steps`, with `compensation`, `result` and `timeout` as at the top level), and its input.", Keys: []YAMLKey{
		{"plan", "The plan id of a stored definition (`weft definition put`); it must exist when the parent is submitted.", "planId: p\nsteps:\n  - name: refund\n    workflow:\n      plan: refund\n"},
		{"version", "The stored definition's version; without it, the latest version when the parent is submitted, pinned for the run.", "planId: p\nsteps:\n  - name: refund\n    workflow:\n      plan: refund\n      version: \"3\"\n"},
		{"input", "The child run's input, any YAML.", "planId: p\nsteps:\n  - name: refund\n    workflow:\n      plan: refund\n      input: {amount: 10}\n"},
		{"steps", "An inline child definition's steps, as at the top level.", "planId: p\nsteps:\n  - name: notify\n    workflow:\n      result: email\n      steps:\n        - name: email\n"},
		{"compensation", "The inline child's compensation hooks.", "planId: p\nsteps:\n  - name: book\n    workflow:\n      steps:\n        - name: reserve\n        - name: pay\n          dependsOn: [reserve]\n      compensation:\n        - step: reserve\n          operation: release\n"},
		{"result", "The inline child's step whose output is the child's result, and so the step's output.", "planId: p\nsteps:\n  - name: quote\n    workflow:\n      result: price\n      steps:\n        - name: price\n"},
		{"timeout", "The inline child's workflow timeout.", "planId: p\nsteps:\n  - name: quote\n    workflow:\n      timeout: 10m\n      steps:\n        - name: price\n"},
	}},
	{Path: "concurrency", About: "The runs' concurrency limit per key (docs/semantics.md#run-concurrency).", Keys: []YAMLKey{
		{"key", "A CEL expression answering a string over `input` and `run.id` (not `steps`: it is evaluated when the run is submitted); runs with the same key share the limit.", "# input: {\"customer\": \"acme\"}\nplanId: charge\nconcurrency:\n  key: input.customer\n  limit: 2\nsteps:\n  - name: charge\n"},
		{"limit", "The most started runs of one key at once, 1–100000.", "# input: {\"customer\": \"acme\"}\nplanId: charge\nconcurrency:\n  key: input.customer\n  limit: 2\nsteps:\n  - name: charge\n"},
		{"strategy", "What a run that finds its key full does: `queue` (waits QUEUED, in priority then submission order; the default), `cancelNewest` (it ends CANCELLED) or `cancelInProgress` (the oldest started run of the key is cancelled and the new run takes its slot).", "# input: {\"customer\": \"acme\"}\nplanId: deploy\nconcurrency:\n  key: input.customer\n  limit: 1\n  strategy: cancelInProgress\nsteps:\n  - name: roll-out\n"},
	}},
	{Path: "fairness", About: "Fairness within a queue's priority (docs/semantics.md#fairness); also on a step (`steps[].fairness`), replacing it for the step's tasks.", Keys: []YAMLKey{
		{"key", "A CEL expression answering a string — over `input` and `run.id` (and, on a step, `steps.<id>.output` of upstream steps) — evaluated when a task is created. Within one priority of a queue, ready tasks of different keys are handed out in proportion to their keys' weights, oldest first within a key.", "# input: {\"tenant\": \"acme\"}\nplanId: p\nfairness:\n  key: input.tenant\nsteps:\n  - name: a\n"},
		{"weight", "The key's share: a number from 0.001 to 1000 (default 1), or a CEL expression answering one over the same variables as `key`.", "# input: {\"tenant\": \"acme\", \"tier\": \"gold\"}\nplanId: p\nfairness:\n  key: input.tenant\n  weight: \"input.tier == 'gold' ? 3 : 1\"\nsteps:\n  - name: a\n"},
	}},
}

// knownKeys refuses every key of mapping n (and of the mappings it merges)
// that is not one of keys.
func (l *yamlLoader) knownKeys(n *yaml.Node, path string, keys []string) {
	l.knownKeysDepth(resolve(n), path, keys, 0)
}

func (l *yamlLoader) knownKeysDepth(n *yaml.Node, path string, keys []string, depth int) {
	if n == nil || n.Kind != yaml.MappingNode || depth > maxYAMLMergeDepth {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			l.fail(path, "yaml.key", "%s must have string keys", mappingName(path))
		case k.ShortTag() == "!!merge":
			for _, src := range mergeSources(resolve(n.Content[i+1])) {
				l.knownKeysDepth(src, path, keys, depth+1)
			}
		case path == "" && (strings.HasPrefix(k.Value, "x-") || n.Content[i+1].Anchor != ""):
		case !contains(keys, k.Value):
			l.fail(join(path, k.Value), "yaml.unknown_key", "unknown key %s%s", short(k.Value), didYouMean(k.Value, keys))
		}
	}
}

// mappingName names a mapping in a message.
func mappingName(path string) string {
	if path == "" {
		return "the document"
	}
	return fieldName(path)
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// apiNames are the API's names (and other spellings people reach for) of
// keys the YAML shape spells otherwise: "retry" is the API's name of
// retryPolicy, too far from it to be a typo.
var apiNames = map[string]string{
	"retry": "retryPolicy", "retry_policy": "retryPolicy", "retries": "retryPolicy",
	"depends_on": "dependsOn", "needs": "dependsOn", "after": "dependsOn",
	"wait_for_signal": "waitForSignal", "signal": "waitForSignal",
	"on_failure": "onFailure", "requires_approval": "requiresApproval",
	"timeout_ms": "timeout", "heartbeat_timeout_ms": "heartbeatTimeout",
	"schedule_to_start_timeout_ms": "scheduleToStartTimeout", "manual_timeout_ms": "manualTimeout",
	"max_attempts": "maxAttempts", "max_retries": "maxRetries", "initial_backoff_ms": "initialDelay",
	"max_backoff_ms": "maxDelay", "backoff_multiplier": "multiplier", "retryable_errors": "retryableErrors",
	"actions": "steps", "action_id": "name", "completion_mode": "manual", "result_action_id": "result",
	"retention_ms": "retention", "search_attributes": "searchAttributes", "max_concurrent_runs": "maxConcurrentRuns", "plan_id": "planId",
	"plan_version": "planVersion", "display_name": "displayName", "signal_name": "name",
	"sleep_ms": "sleep", "sleep_until": "sleepUntil", "max_iterations": "maxIterations", "if": "when", "skip_if": "when",
	"for_each": "forEach", "foreach": "forEach", "max_concurrency": "maxConcurrency", "parallelism": "maxConcurrency",
}

// didYouMean answers `; did you mean "k"?` for the key an unknown one was
// probably meant to be: the YAML key of an API name (apiNames), or the known
// key closest to it when that one is close enough to be a typo; else "".
func didYouMean(key string, keys []string) string {
	if k, ok := apiNames[key]; ok && contains(keys, k) {
		return "; did you mean " + short(k) + "?"
	}
	best, bestDist := "", -1
	for _, k := range keys {
		d := editDistance(strings.ToLower(key), strings.ToLower(k))
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist < 0 || bestDist > max(1, len(best)/3) {
		return ""
	}
	return "; did you mean " + short(best) + "?"
}

// editDistance is the optimal-string-alignment distance between a and b, in
// bytes: insertions, deletions, substitutions and swaps of neighbours cost
// one each ("nmae" is one from "name"). Keys are short, and anything longer
// than a key cannot be close to one.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
