package engine

import (
	"bytes"
	"context"
	"errors"

	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// cacheSize bounds each generation of the engine's caches of run records and
// decoded checkpoints (recentCache): with two generations, at most twice
// this many runs are held. What they save is decoding for the runs in
// flight, a few times the concurrent clients; each run costs about 3.4 KB
// (five steps), so 2 x 4,096 held 28 MB of live heap in a weftd that had
// just accepted 100k runs, a third of its heap, for runs it would not read
// again.
const cacheSize = 1024

// records reads what a decision starts from — run records, checkpoints and
// task records — through caches of what this engine committed or read. The
// caches are never a source of truth: a run record is immutable, and a
// checkpoint or task record taken from a cache is proved current by the
// version its commit is conditioned on.
type records struct {
	store store.Store
	// runs caches run records (immutable once written); checkpoints caches
	// decoded checkpoints by version.
	runs        *dispatch.Recent[*record.Run]
	checkpoints *dispatch.Recent[cachedCheckpoint]
	// tasks caches the task records this engine committed, by task id
	// (checkpoint.go).
	tasks *dispatch.Recent[cachedTask]
}

func newRecords(st store.Store) records {
	return records{store: st, runs: dispatch.NewRecent[*record.Run](cacheSize),
		checkpoints: dispatch.NewRecent[cachedCheckpoint](cacheSize), tasks: dispatch.NewRecent[cachedTask](cacheSize)}
}

// cachedCheckpoint is a decoded checkpoint and the version it was stored
// at. Its state is shared by readers and is never changed: a decision works
// on a clone.
type cachedCheckpoint struct {
	version uint64
	state   *runstate.State
}

// loadCheckpoint reads a run's checkpoint and its version. The state it
// answers is shared and must not be changed; mutate works on a clone
// (loadCheckpointForChange).
//
// The store is always read, so the answer is as fresh as without a cache;
// what is saved is decoding, when the version read is the one decoded last.
// A read never replaces a newer version a commit cached meanwhile.
func (e *records) loadCheckpoint(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	s, version, err := e.loadStoredCheckpoint(ctx, runID)
	if err == nil && s.Removing {
		return nil, 0, runNotFound(runID) // invisible while retention removes it
	}
	return s, version, err
}

// loadStoredCheckpoint is loadCheckpoint, also of a run being removed: for
// decisions, whose pipeline hides such a run from every decision but the
// removal's own (startingState).
func (e *records) loadStoredCheckpoint(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	item, err := e.store.Get(ctx, runlog.CheckpointKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		e.checkpoints.Remove(runID)
		return nil, 0, runNotFound(runID)
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

// checkpointToDecideOn answers a private copy of the checkpoint a decision
// starts from and its version: the cached one unless fromStore (answering
// cached true), else the store's.
func (e *records) checkpointToDecideOn(ctx context.Context, runID string, fromStore bool) (*runstate.State, uint64, bool, error) {
	if c, ok := e.checkpoints.Get(runID); ok && !fromStore {
		return c.state.Clone(), c.version, true, nil
	}
	s, version, err := e.loadCheckpointForChange(ctx, runID)
	return s, version, false, err
}

// loadCheckpointForChange answers a private copy of the checkpoint that a
// decision may change.
func (e *records) loadCheckpointForChange(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	s, version, err := e.loadStoredCheckpoint(ctx, runID)
	if err != nil {
		return nil, 0, err
	}
	return s.Clone(), version, nil
}

// checkpointCommitted remembers the checkpoint a decision just committed at
// version, so that the next decision or read of the run need not decode it.
// The decision must not change state afterwards.
func (e *records) checkpointCommitted(runID string, version uint64, state *runstate.State) {
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

// notedTask is a task record a decision put, and its encoding.
type notedTask struct {
	record record.Task
	body   []byte
}

// notePutTask remembers a task record the decision writes, as written.
func (c *recorder) notePutTask(key []byte, t *record.Task, body []byte) {
	if c.taskPuts == nil {
		c.taskPuts = map[string]notedTask{}
	}
	c.taskPuts[string(key)] = notedTask{record: *t, body: body}
}

// tasksCommitted caches the task records a committed decision wrote, with
// their new versions (res.Versions follows batch.Ops). A record is cached
// only as the batch wrote it: one put and then rolled back is not.
func (e *records) tasksCommitted(ch *change, batch *store.Batch, res *store.CommitResult) {
	if len(ch.taskPuts) == 0 {
		return
	}
	for i, op := range batch.Ops {
		noted, ok := ch.taskPuts[string(op.Key)]
		if !ok || i >= len(res.Versions) {
			continue
		}
		if op.Kind == store.OpPut && bytes.Equal(op.Value, noted.body) {
			e.tasks.Put(noted.record.TaskID, cachedTask{version: res.Versions[i], record: noted.record})
		} else {
			e.tasks.Remove(noted.record.TaskID)
		}
	}
}

// forgetTasks drops the task records a decision meant to write: its commit
// failed, or its outcome is unknown.
func (e *records) forgetTasks(ch *change) {
	for _, noted := range ch.taskPuts {
		e.tasks.Remove(noted.record.TaskID)
	}
}

// claimedTask answers, for a report with token, the task record and its
// version: the cached one when it shows that claim (cached), else the
// store's. A decision on a cached record that finds the claim lost is made
// again on the store's (report): another engine may have recorded this very
// report, which the store's record shows as a duplicate.
func (e *records) claimedTask(ctx context.Context, taskID, token string, fresh bool) (t *record.Task, version uint64, cached bool, err error) {
	if c, ok := e.tasks.Get(taskID); ok && !fresh && c.record.State == record.TaskClaimed && c.record.Token == token {
		rec := c.record
		return &rec, c.version, true, nil
	}
	t, version, err = e.loadTask(ctx, taskID)
	return t, version, false, err
}
