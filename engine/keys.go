package engine

import (
	"time"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The engine's key layout (docs/persisted-format.md lists every record).
// Components go through the store's escaping codec, so no identifier can
// collide with another or break out of its prefix.

// runKey holds a run's immutable record: definition, context, input.
func runKey(runID string) []byte { return store.Key("wf", runID) }

// checkpointKey holds a run's checkpoint (State).
func checkpointKey(runID string) []byte { return store.Key("wf", runID, "ckpt") }

// eventKey holds one event; run_seq sorts numerically.
func eventKey(runID string, seq uint64) []byte {
	return store.Key("wf", runID, "ev", store.Uint64(seq))
}

// eventPrefix is the prefix of every event of a run.
func eventPrefix(runID string) []byte { return store.KeyPrefix("wf", runID, "ev") }

// eventIdemKey enforces (run_id, idempotency_key) uniqueness.
func eventIdemKey(runID, idemKey string) []byte { return store.Key("wf", runID, "ek", idemKey) }

// outboxKey holds an event waiting for export (the transactional outbox):
// written in the batch that appends the event, deleted once published.
func outboxKey(runID string, seq uint64) []byte {
	return store.Key("ob", runID, store.Uint64(seq))
}

// runRequestKey maps spec 004 §3's submission tuple to a run.
func runRequestKey(tenant, project, env, planID, planVersion, runRequestID string) []byte {
	return store.Key("rr", tenant, project, env, planID, planVersion, runRequestID)
}

// runIndexKey lists a tenant's runs, newest first (inverted creation time).
func runIndexKey(tenant string, created time.Time, runID string) []byte {
	return store.Key("ri", tenant, store.Int64(-created.UnixNano()), runID)
}

// runIndexPrefix is the prefix of a tenant's run index.
func runIndexPrefix(tenant string) []byte { return store.KeyPrefix("ri", tenant) }

// runStatusKey indexes a run under its current status, so that runs can be
// counted by status without reading their checkpoints. Moved in the batch
// of every status change.
func runStatusKey(tenant string, status runstate.RunStatus, runID string) []byte {
	return store.Key("rs", string(status), tenant, runID)
}

// pendingTriggerKey marks a run whose submission asked to start it, until the
// trigger commits; recovery finishes what a crash interrupted.
func pendingTriggerKey(runID string) []byte { return store.Key("pt", runID) }

// readyTaskKey is a task waiting in its queue: spec 003's
// op:{queue}:{scheduled}:{id}, with the tenant before the queue so that one
// tenant's workers never see another's tasks.
// Within one instant, tasks keep the order they were dispatched in (seq).
func readyTaskKey(tenant, queue string, notBefore time.Time, seq uint64, taskID string) []byte {
	return store.Key("op", tenant, queue, store.Time(notBefore), store.Uint64(seq), taskID)
}

// readyTaskRange bounds a queue's tasks that are due at now.
func readyTaskRange(tenant, queue string, now time.Time) (start, end []byte) {
	return queuePrefix(tenant, queue), store.KeyPrefix("op", tenant, queue, store.Time(now.Add(time.Nanosecond)))
}

// queuePrefix begins every ready entry of one queue.
func queuePrefix(tenant, queue string) []byte { return store.KeyPrefix("op", tenant, queue) }

// taskKey holds a task's claim state.
func taskKey(taskID string) []byte { return store.Key("task", taskID) }

// timerKey is a durable timer; timers sort by due time.
func timerKey(due time.Time, runID, kind, ref string) []byte {
	return store.Key("tmr", store.Time(due), runID, kind, ref)
}

// timerRange bounds the timers due at now.
func timerRange(now time.Time) (start, end []byte) {
	return store.KeyPrefix("tmr"), store.KeyPrefix("tmr", store.Time(now.Add(time.Nanosecond)))
}

// signalKey holds an accepted signal's payload (spec 003's sig: record).
func signalKey(runID, name, id string) []byte { return store.Key("sig", runID, name, id) }

// signalAcceptedKey holds the accepted-response record of a signal; an
// additive prefix, so readers of sig: never mistake it for a payload.
func signalAcceptedKey(runID, name, id string) []byte { return store.Key("sigr", runID, name, id) }

// manualCompletionKey holds the result of a manual completion, keyed by spec
// 000 §3.3's idempotency tuple.
func manualCompletionKey(runID, actionID, token string) []byte {
	return store.Key("mc", runID, actionID, token)
}

// signalExpiryKey indexes accepted-response records by expiry, so retention
// visits only what has expired.
func signalExpiryKey(expires time.Time, runID, name, id string) []byte {
	return store.Key("sigx", store.Time(expires), runID, name, id)
}

// signalExpiryRange bounds the index entries expired at now.
func signalExpiryRange(now time.Time) (start, end []byte) {
	return store.KeyPrefix("sigx"), store.KeyPrefix("sigx", store.Time(now.Add(time.Nanosecond)))
}
