package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// cacheSize bounds each generation of the engine's caches of run records and
// decoded checkpoints (dispatch.Recent): with two generations, at most twice
// this many runs are held. What they save is decoding for the runs in
// flight, a few times the concurrent clients; each run costs about 3.4 KB
// (five steps); a bound of 4,096 once held 28 MB of live heap in a weftd
// that had just accepted 100k runs, a third of its heap, for runs it would not read
// again.
const cacheSize = 1024

// Records reads what a decision starts from — run records, checkpoints and
// task records — through caches of what this engine committed or read. The
// caches are never a source of truth: a run record is immutable, and a
// checkpoint or task record taken from a cache is proved current by the
// version its commit is conditioned on.
type Records struct {
	store store.Store
	// runs caches run records (immutable once written); checkpoints caches
	// decoded checkpoints by version.
	runs        *dispatch.Recent[*record.Run]
	checkpoints *dispatch.Recent[cachedCheckpoint]
	// plans caches plan records (immutable once written), by tenant and
	// plan SHA-256.
	plans *planCache
	// tasks caches the task records this engine committed, by task id.
	tasks *dispatch.Recent[cachedTask]
}

// New answers the records of st, their caches empty.
func New(st store.Store) Records {
	return Records{store: st, runs: dispatch.NewRecent[*record.Run](cacheSize), plans: newPlanCache(planCacheSize),
		checkpoints: dispatch.NewRecent[cachedCheckpoint](cacheSize), tasks: dispatch.NewRecent[cachedTask](cacheSize)}
}

// cachedCheckpoint is a decoded checkpoint and the version it was stored
// at. Its state is shared by readers and is never changed: a decision works
// on a clone.
type cachedCheckpoint struct {
	version uint64
	state   *runstate.State
}

// LoadCheckpoint reads a run's checkpoint and its version. The state it
// answers is shared and must not be changed; a decision works on a
// clone (LoadCheckpointForChange).
//
// The store is always read, so the answer is as fresh as without a cache;
// what is saved is decoding, when the version read is the one decoded last.
// A read never replaces a newer version a commit cached meanwhile.
func (e *Records) LoadCheckpoint(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	s, version, err := e.LoadStoredCheckpoint(ctx, runID)
	if err == nil && s.Removing {
		return nil, 0, RunNotFound(runID) // invisible while retention removes it
	}
	return s, version, err
}

// LoadStoredCheckpoint is LoadCheckpoint, also of a run being removed: for
// decisions, whose pipeline hides such a run from every decision but the
// removal's own (startingState).
func (e *Records) LoadStoredCheckpoint(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	item, err := e.store.Get(ctx, runlog.CheckpointKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		e.checkpoints.Remove(runID)
		return nil, 0, RunNotFound(runID)
	}
	if err != nil {
		return nil, 0, err
	}
	if c, ok := e.checkpoints.Get(runID); ok && c.version == item.Version {
		return c.state, item.Version, nil
	}
	s, err := runlog.DecodeCheckpoint(runID, item.Value)
	if err != nil {
		return nil, 0, err
	}
	e.checkpoints.PutUnless(runID, cachedCheckpoint{version: item.Version, state: s},
		func(held cachedCheckpoint) bool { return held.version > item.Version })
	return s, item.Version, nil
}

// CheckpointToDecideOn answers a private copy of the checkpoint a decision
// starts from and its version: the cached one unless fromStore (answering
// cached true), else the store's.
func (e *Records) CheckpointToDecideOn(ctx context.Context, runID string, fromStore bool) (*runstate.State, uint64, bool, error) {
	if c, ok := e.checkpoints.Get(runID); ok && !fromStore {
		return c.state.Clone(), c.version, true, nil
	}
	s, version, err := e.LoadCheckpointForChange(ctx, runID)
	return s, version, false, err
}

// LoadCheckpointForChange answers a private copy of the checkpoint that a
// decision may change.
func (e *Records) LoadCheckpointForChange(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	s, version, err := e.LoadStoredCheckpoint(ctx, runID)
	if err != nil {
		return nil, 0, err
	}
	return s.Clone(), version, nil
}

// CheckpointCommitted remembers the checkpoint a decision just committed at
// version, so that the next decision or read of the run need not decode it.
// The decision must not change state afterwards.
func (e *Records) CheckpointCommitted(runID string, version uint64, state *runstate.State) {
	e.checkpoints.Put(runID, cachedCheckpoint{version: version, state: state})
}

// The task cache. A worker's report first needs its task record and that
// record's version, to check the token and to condition its commit on the
// record being unchanged; in a cluster that read is a database round trip on
// every step. The engine keeps the task records its own commits wrote, with
// the versions those commits gave them, and a report takes the cached record
// when it shows the claim the report names (claimed, same token): the
// commit's IfVersion on the task proves it current, and a failed commit drops
// it and reads the store. Everything else — a duplicate, a lost claim, a
// record not cached — is answered from the store, as before.

// cachedTask is a task record as a commit of this engine wrote it, and the
// version that commit gave it. The record is never changed: takers copy it.
type cachedTask struct {
	version uint64
	record  record.Task
}

// NotedTask is a task record a decision put at Key, and its encoding.
type NotedTask struct {
	Key    []byte
	Record record.Task
	Body   []byte
}

// TasksCommitted caches the task records a committed decision wrote, with
// their new versions (res.Versions follows batch.Ops); of a key noted more
// than once, the last. A record is cached only as the batch wrote it: one
// put and then rolled back is not.
func (e *Records) TasksCommitted(puts []NotedTask, batch *store.Batch, res *store.CommitResult) {
	if len(puts) == 0 {
		return
	}
	for i, op := range batch.Ops {
		noted := lastNoted(puts, op.Key)
		if noted == nil || i >= len(res.Versions) {
			continue
		}
		if op.Kind == store.OpPut && bytes.Equal(op.Value, noted.Body) {
			e.tasks.Put(noted.Record.TaskID, cachedTask{version: res.Versions[i], record: noted.Record})
		} else {
			e.tasks.Remove(noted.Record.TaskID)
		}
	}
}

// lastNoted answers the last of puts noted at key, or nil.
func lastNoted(puts []NotedTask, key []byte) *NotedTask {
	for i := len(puts) - 1; i >= 0; i-- {
		if bytes.Equal(puts[i].Key, key) {
			return &puts[i]
		}
	}
	return nil
}

// ForgetTasks drops the task records a decision meant to write: its commit
// failed, or its outcome is unknown.
func (e *Records) ForgetTasks(puts []NotedTask) {
	for i := range puts {
		e.tasks.Remove(puts[i].Record.TaskID)
	}
}

// ClaimedTask answers, for a report with token, the task record and its
// version: the cached one when it shows that claim (cached), else the
// store's, or its run's checkpoint claim at version 0 (Task). A decision on a cached record that finds the claim lost is made
// again on the store's (report): another engine may have recorded this very
// report, which the store's record shows as a duplicate.
func (e *Records) ClaimedTask(ctx context.Context, taskID, token string, fresh bool) (t *record.Task, version uint64, cached bool, err error) {
	if c, ok := e.tasks.Get(taskID); ok && !fresh && c.record.State == record.TaskClaimed && c.record.Token == token {
		rec := c.record
		return &rec, c.version, true, nil
	}
	t, version, err = e.Task(ctx, taskID)
	return t, version, false, err
}

// ClaimsCommitted caches the checkpoint claims a committed decision made
// (CheckpointClaim), at version 0: their records are absent.
func (e *Records) ClaimsCommitted(claims []*record.Task) {
	for _, t := range claims {
		e.tasks.Put(t.TaskID, cachedTask{record: *t})
	}
}

// LoadRun reads a run's immutable record, cached after the first read. A
// record that refers to its plan gets its definition from the plan record
// of its own tenant (LoadPlan); one whose plan record is missing, or holds
// another definition, is an error, never a run with another plan.
func (e *Records) LoadRun(ctx context.Context, runID string) (*record.Run, error) {
	if r, ok := e.runs.Get(runID); ok {
		return r, nil
	}
	item, err := e.store.Get(ctx, record.RunKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, RunNotFound(runID)
	}
	if err != nil {
		return nil, err
	}
	var r record.Run
	refers, err := record.DecodeRun(runID, item.Value, &r)
	if err != nil {
		return nil, err
	}
	if refers {
		plan, err := e.LoadPlan(ctx, r.TenantID, r.PlanSHA256)
		if err != nil {
			return nil, fmt.Errorf("run record %s: %w", runID, err)
		}
		r.Definition = plan.Definition
	}
	e.runs.Put(runID, &r)
	return &r, nil
}

// The plan cache. Every run of a plan refers to one plan record per tenant
// (record.PlanKey), which never changes once written: a plan held here is
// the store's, and is known stored, so a submission of it writes no plan
// record and a run of it loads with no read of its plan. Plans are held by
// tenant and plan SHA-256, so that one tenant's run is never given a plan
// only another tenant stored.

// planCacheSize bounds each generation of the plan cache: the distinct
// plans in use, not the runs.
const planCacheSize = 256

// ErrPlanMissing is a run whose plan record is not stored.
var ErrPlanMissing = errors.New("its plan record is missing")

// LoadPlan reads a tenant's plan record, cached after the first read.
func (e *Records) LoadPlan(ctx context.Context, tenant, planSHA256 string) (*record.Plan, error) {
	key := planID{tenant: tenant, sha256: planSHA256}
	if p, ok := e.plans.get(key); ok {
		return p, nil
	}
	item, err := e.store.Get(ctx, record.PlanKey(tenant, planSHA256))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("plan %s: %w", planSHA256, ErrPlanMissing)
	}
	if err != nil {
		return nil, err
	}
	p, err := record.DecodePlan(item.Value, planSHA256)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", planSHA256, err)
	}
	e.plans.put(key, p)
	return p, nil
}

// PlanStored reports whether the tenant's plan record is stored: held in
// the plan cache, else read (and then held). A submission writes the plan
// record only when it is not.
func (e *Records) PlanStored(ctx context.Context, tenant, planSHA256 string) (bool, error) {
	_, err := e.LoadPlan(ctx, tenant, planSHA256)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrPlanMissing):
		return false, nil
	}
	return false, err
}

// PlanWritten remembers a plan a committed submission wrote, or found
// already stored: plan is its definition, which nothing changes.
func (e *Records) PlanWritten(tenant, planSHA256 string, plan *record.Plan) {
	e.plans.put(planID{tenant: tenant, sha256: planSHA256}, plan)
}

// RunNotFound answers a run that does not exist (or is being removed).
func RunNotFound(runID string) *fault.Error {
	return fault.NotFound(runID, "", "run "+runID+" not found")
}

// RunFor answers a run's record when it belongs to the tenant; another
// tenant's run is not found, never forbidden, so ids leak nothing.
func (e *Records) RunFor(ctx context.Context, tenantID, runID string) (*record.Run, error) {
	rec, err := e.LoadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if rec.TenantID != tenantID {
		return nil, RunNotFound(runID)
	}
	return rec, nil
}

// LoadTask reads a task record and its version.
func (e *Records) LoadTask(ctx context.Context, taskID string) (*record.Task, uint64, error) {
	item, err := e.store.Get(ctx, record.TaskKey(taskID))
	if err != nil {
		return nil, 0, err
	}
	var t record.Task
	if err := record.DecodeTask(item.Value, &t); err != nil {
		return nil, 0, fmt.Errorf("task %s: %w", taskID, err)
	}
	return &t, item.Version, nil
}

// LookAgain answers the run's checkpoint for a waiter that last saw version
// seen: the cached one when it is newer (a commit of this engine advanced it,
// so no read is needed to see it), else the store's. A cached terminal state
// is final; a non-terminal one is at worst overtaken by another engine's
// commit, whose wake-up, or the next interval, finds the cache not advanced
// and reads the store.
func (e *Records) LookAgain(ctx context.Context, runID string, seen uint64) (*runstate.State, uint64, error) {
	if c, ok := e.checkpoints.Get(runID); ok && seen != 0 && c.version > seen {
		return c.state, c.version, nil
	}
	return e.LoadCheckpoint(ctx, runID)
}

// LookSince answers the run's checkpoint for a waiter that already holds
// version held of it, a version a commit of this engine answered (0: none):
// the cached one when it is that version or newer — a checkpoint is cached
// only once its commit succeeded (CheckpointCommitted) or as read, so it is
// committed — else the store's (LookAgain).
func (e *Records) LookSince(ctx context.Context, runID string, held uint64) (*runstate.State, uint64, error) {
	if c, ok := e.checkpoints.Get(runID); ok && held != 0 && c.version >= held {
		return c.state, c.version, nil
	}
	return e.LookAgain(ctx, runID, held)
}

// CommittedVersion answers the version at which the cache holds state, a
// checkpoint a commit of this engine just cached (CheckpointCommitted), or 0
// when it no longer holds that very state.
func (e *Records) CommittedVersion(runID string, state *runstate.State) uint64 {
	if c, ok := e.checkpoints.Get(runID); ok && c.state == state {
		return c.version
	}
	return 0
}

// ForgetRun drops a removed run's record and checkpoint.
func (e *Records) ForgetRun(runID string) {
	e.runs.Remove(runID)
	e.checkpoints.Remove(runID)
}

// ForgetCheckpoint drops a run's checkpoint, which may be stale.
func (e *Records) ForgetCheckpoint(runID string) { e.checkpoints.Remove(runID) }

// ForgetTask drops a task record that changed under this engine.
func (e *Records) ForgetTask(taskID string) { e.tasks.Remove(taskID) }

// RunWritten remembers a run record this engine just wrote.
func (e *Records) RunWritten(r *record.Run) { e.runs.Put(r.RunID, r) }
