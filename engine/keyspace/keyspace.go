package keyspace

import "github.com/weft-dev/weft/store"

// Prefix is one kind of record's place in the store: its keys begin with
// Name and a separator, followed by the components the record's own key
// names (store.Key's codec).
type Prefix struct {
	// Name is the key's first component; it never needs escaping.
	Name string
	// Owner is the package that writes the records (and builds their keys).
	Owner string
	// Holds says what a record under the prefix is.
	Holds string
	// Order says how the keys sort, which is what scans over them rely on.
	Order string
	// head is Name and the separator: every key's first bytes.
	head string
}

// Key answers the key of a record under p: p's name, then components,
// encoded as store.Key encodes them. At least one component is required.
func (p Prefix) Key(components ...string) []byte {
	return store.AppendKey(p.buffer(components, 0), components...)
}

// KeyPrefix answers the prefix shared by every key under p whose leading
// components are exactly components (store.KeyPrefix); with none, every key
// under p.
func (p Prefix) KeyPrefix(components ...string) []byte {
	if len(components) == 0 {
		return []byte(p.head)
	}
	return append(store.AppendKey(p.buffer(components, 1), components...), store.Separator)
}

// buffer answers p's head in a buffer with room for components and extra
// bytes (when none needs escaping): a key is built in one allocation.
func (p Prefix) buffer(components []string, extra int) []byte {
	n := len(p.head) + extra + len(components)
	for _, c := range components {
		n += len(c)
	}
	return append(make([]byte, 0, n), p.head...)
}

func prefix(name, owner, holds, order string) Prefix {
	return Prefix{Name: name, Owner: owner, Holds: holds, Order: order, head: name + string(store.Separator)}
}

// The prefixes, in the order docs/persisted-format.md lists them.
var (
	// Run holds a run's record (wf:{run}) and, below it, its checkpoint
	// (wf:{run}:ckpt), its events (wf:{run}:ev:{run_seq}) and its events'
	// idempotency keys (wf:{run}:ek:{key}).
	Run = prefix("wf", "engine/internal/record (the run record), engine/runlog (checkpoint, events, event keys)",
		"a run's record, its checkpoint, its events and their idempotency keys",
		"by run, then the record's kind; events by run_seq (fixed-width hex)")
	// RunRequest holds the run id of each run request (its uniqueness tuple).
	RunRequest = prefix("rr", "engine/internal/record", "the run id of a run request",
		"by tenant, project, environment, plan, version, run_request_id")
	// RunIndex lists a tenant's runs an older weftd submitted, newest first.
	RunIndex = prefix("ri", "engine/internal/record", "a run id, indexing a tenant's runs an older weftd submitted",
		"by tenant, then newest first (negated creation time, fixed-width hex)")
	// RunStatus indexes runs by their current status.
	RunStatus = prefix("rs", "engine/internal/record", "nothing: a run indexed under its status",
		"by status, tenant, an empty component, then newest first (negated creation time, fixed-width hex), then run; an older weftd's run by status, tenant, run")
	// PendingTrigger marks a submission not yet triggered.
	PendingTrigger = prefix("pt", "engine/internal/record", "a submission with start not yet triggered",
		"by run")
	// Ready holds the ready-queue entries pollers scan.
	Ready = prefix("op", "engine/internal/record", "a ready task's queue entry",
		"by tenant, queue, not_before (fixed-width hex), dispatch seq, task")
	// Task holds task records.
	Task = prefix("task", "engine/internal/record", "a task's claim state",
		"by task id, which begins with its run id")
	// Timer holds durable timers.
	Timer = prefix("tmr", "engine/internal/record", "a durable timer",
		"by due time (fixed-width hex), run, kind, ref")
	// DeadlineIndex indexes the attempt deadlines of a run's claims, one
	// entry per run and bucket of DeadlineBucketWidth.
	DeadlineIndex = prefix("tmd", "engine/internal/record", "the earliest attempt deadline among a run's claims whose deadlines fall in one 10 s bucket",
		"by bucket start (fixed-width hex), run")
	// SignalPayload holds accepted signals' payloads.
	SignalPayload = prefix("sig", "engine/internal/acceptance", "a signal's payload",
		"by run, signal name, signal id")
	// SignalRecord holds accepted-response records.
	SignalRecord = prefix("sigr", "engine/internal/acceptance", "a signal's accepted-response record",
		"by run, signal name, signal id")
	// SignalExpiry indexes accepted-response records by expiry.
	SignalExpiry = prefix("sigx", "engine/internal/acceptance", "nothing: an accepted record indexed by its expiry",
		"by expiry (fixed-width hex), run, signal name, signal id")
	// Recon holds reconciliation records.
	Recon = prefix("rec", "engine (reportverification.go)", "an operation's reconciliation record",
		"by run, activity, operation id")
	// Outbox holds the transactional outbox's entries.
	Outbox = prefix("ob", "engine/runlog (written), export (read and deleted)", "a run's outbox entry, naming its unexported events; an older weftd's: a reference to one decision's events",
		"by run (the run's entry: an empty last component), then run_seq (fixed-width hex)")
	// OutboxRetry holds the export worker's retry records.
	OutboxRetry = prefix("obr", "export", "an outbox entry's export retry record",
		"by run, then the entry's run_seq (fixed-width hex; empty for a run's entry)")
	// DeadLetter holds the export worker's dead letters.
	DeadLetter = prefix("dlq", "export", "a dead-lettered outbox entry and its events",
		"by run, then the run_seq of its first event (fixed-width hex)")
	// Slot holds the concurrency limits' slots.
	Slot = prefix("slot", "engine/internal/admission", "the run id holding a concurrency slot, or of a QUEUED run of a run concurrency key",
		"by tenant, then the limit (* or plan:{plan} or key:{plan}:{key}), then the slot number; keyq:{plan}:{key}, then p{priority}, queued_at (fixed-width hex), run")
	// RunQueue holds QUEUED runs waiting for a slot.
	RunQueue = prefix("rq", "engine/internal/admission", "the run id of a QUEUED run (and its concurrency key's slot prefix)",
		"by priority lane (3 first, then ~p{n}), then oldest first: by queued_at (fixed-width hex), run")
	// Manual holds manual completions' results.
	Manual = prefix("mc", "engine/internal/acceptance", "a manual completion's canonical result",
		"by run, action, completion token")
	// Expiry indexes finished runs by when retention removes them.
	Expiry = prefix("rx", "engine/internal/retention", "nothing: a finished run indexed by its retain_until",
		"by retain_until (fixed-width hex), run")
	// Poller holds poller records.
	Poller = prefix("wk", "engine/internal/pollers", "a worker's poller record, per weftd process",
		"by tenant, queue, worker, process")
	// Schedule holds schedule records.
	Schedule = prefix("sch", "schedule", "a schedule's record", "by tenant, schedule")
	// Batch holds batch operations' records.
	Batch = prefix("bat", "batch", "a batch operation's record: what it does, its runs' count, its progress and its owner",
		"by tenant, batch")
	// BatchRun holds a batch's runs, with each one's outcome.
	BatchRun = prefix("btr", "batch", "one run of a batch and how the operation went on it",
		"by tenant, batch, the batch's selection nonce, then the run's place in the selection (fixed-width decimal)")
	// BatchActive indexes the batches still running.
	BatchActive = prefix("bta", "batch", "nothing: a running batch, so that every weftd finds the batches to drive",
		"by tenant, batch")
	// Definition holds the definition registry's stored versions.
	Definition = prefix("def", "engine/internal/record", "a stored definition version: the definition (defaults applied), its plan SHA-256, who stored it and when",
		"by tenant, plan, version")
	// DefinitionHead holds each plan's latest version.
	DefinitionHead = prefix("defh", "engine/internal/record", "a plan's latest stored version and how many it has",
		"by tenant, plan")
	// Plan holds each tenant's plans: the definition of every run of the
	// tenant with that plan SHA-256, stored once for them all.
	Plan = prefix("pl", "engine/internal/record", "a plan record: the definition (defaults applied) of a tenant's runs of one plan SHA-256, which their run records refer to",
		"by tenant, plan SHA-256")
	// FlowSlot holds the task holding one slot of a step concurrency key.
	FlowSlot = prefix("fcs", "engine (flow.go)", "the task and claim token holding slot i of a step concurrency key",
		"by tenant, scope, key, slot index")
	// FlowThrottle holds a step throttle key's bucket.
	FlowThrottle = prefix("fct", "engine (flow.go)", "a throttle key's bucket: the theoretical arrival time of its next task",
		"by tenant, scope, key")
	// FairQueue holds the fair-queueing state of one priority of a queue:
	// its virtual time and its fairness keys' finish tags.
	FairQueue = prefix("fcf", "engine (fairclaim.go)", "a queue priority's fair-queueing state: its virtual time (v) or a fairness key's finish tag (k:{key}), a big-endian uint64",
		"by tenant, queue, priority, then v or k and the key")
	// SearchType holds the type each search attribute name has in a tenant.
	SearchType = prefix("sat", "engine/internal/record", "a search attribute's type in a tenant, fixed by its first value",
		"by tenant, attribute name")
	// SearchIndex indexes runs by their query fields' values.
	SearchIndex = prefix("sx", "engine/internal/record", "nothing (a plan entry: the run's plan version): a run indexed under one value of one query field (a search attribute or a built-in field)",
		"by tenant, field, value (order-preserving), then newest first (negated creation time, fixed-width hex), then run")
	// View holds the saved views of the runs list.
	View = prefix("view", "view", "a saved view of the runs list: its name, query and filters, who saved it and when",
		"by tenant, name")
	// Audit holds the audit log's records.
	Audit = prefix("aud", "audit", "an audit record of one call (who, what, on which target, the outcome; never a payload)",
		"by tenant, then newest first (the time inverted, fixed-width hex), then the record id")
)

// All lists every prefix, in the order docs/persisted-format.md lists them.
var All = []Prefix{Run, RunRequest, RunIndex, RunStatus, PendingTrigger, Ready, Task, Timer, DeadlineIndex,
	SignalPayload, SignalRecord, SignalExpiry, Recon, Outbox, OutboxRetry, DeadLetter,
	Slot, RunQueue, Manual, Expiry, Poller, Schedule, Batch, BatchRun, BatchActive, Definition, DefinitionHead, Plan, FlowSlot, FlowThrottle, FairQueue, SearchType, SearchIndex, View, Audit}
