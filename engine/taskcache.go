package engine

import (
	"bytes"
	"context"

	"github.com/weft-dev/weft/store"
)

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
	record  taskRecord
}

// notedTask is a task record a decision put, and its encoding.
type notedTask struct {
	record taskRecord
	body   []byte
}

// notePutTask remembers a task record the decision writes, as written.
func (c *change) notePutTask(key []byte, t *taskRecord, body []byte) {
	if c.taskPuts == nil {
		c.taskPuts = map[string]notedTask{}
	}
	c.taskPuts[string(key)] = notedTask{record: *t, body: body}
}

// tasksCommitted caches the task records a committed decision wrote, with
// their new versions (res.Versions follows batch.Ops). A record is cached
// only as the batch wrote it: one put and then rolled back is not.
func (e *Engine) tasksCommitted(ch *change, batch *store.Batch, res *store.CommitResult) {
	if len(ch.taskPuts) == 0 {
		return
	}
	for i, op := range batch.Ops {
		noted, ok := ch.taskPuts[string(op.Key)]
		if !ok || i >= len(res.Versions) {
			continue
		}
		if op.Kind == store.OpPut && bytes.Equal(op.Value, noted.body) {
			e.tasks.put(noted.record.TaskID, cachedTask{version: res.Versions[i], record: noted.record})
		} else {
			e.tasks.remove(noted.record.TaskID)
		}
	}
}

// forgetTasks drops the task records a decision meant to write: its commit
// failed, or its outcome is unknown.
func (e *Engine) forgetTasks(ch *change) {
	for _, noted := range ch.taskPuts {
		e.tasks.remove(noted.record.TaskID)
	}
}

// claimedTask answers, for a report with token, the task record and its
// version: the cached one when it shows that claim (cached), else the
// store's. A decision on a cached record that finds the claim lost is made
// again on the store's (report): another engine may have recorded this very
// report, which the store's record shows as a duplicate.
func (e *Engine) claimedTask(ctx context.Context, taskID, token string) (t *taskRecord, version uint64, cached bool, err error) {
	if c, ok := e.tasks.get(taskID); ok && c.record.State == taskClaimed && c.record.Token == token {
		rec := c.record
		return &rec, c.version, true, nil
	}
	t, version, err = e.loadTask(ctx, taskID)
	return t, version, false, err
}
