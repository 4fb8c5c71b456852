package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The deadline index (docs/persisted-format.md, tmd:). A claim's attempt
// deadline stays in its task record; what makes it fire is one index entry
// per run and 10 s bucket of deadlines (record.DeadlineKey), written by the
// first claim whose deadline falls in the bucket and listed in the
// checkpoint (runstate.State.Deadlines) with the earliest deadline it
// indexes, which is also the entry's value. The claims after it in the
// same bucket write nothing more, and their reports delete nothing: a
// five-step run whose steps all fit in one bucket writes one entry, where
// every claim used to write an attempt timer and every report delete it.
// The run's end deletes its entries. An entry whose earliest deadline has
// passed fires (fireDueDeadlines): its decision times out every claim of
// the run it indexes whose deadline has passed, in one batch, and moves the
// entry to the earliest deadline left in its bucket, or deletes it.
//
// The index is bounded: a run lists at most maxDeadlineEntries; a claim
// whose bucket is not listed while the list is full writes its attempt
// timer as before (record.TimerAttempt), and so do the claims of an older
// weftd, whose attempt timers still fire the same way.

// maxDeadlineEntries bounds a run's deadline index entries: past it, claims
// write attempt timers.
const maxDeadlineEntries = 8

// armDeadline makes a claim's deadline fire: through the run's deadline
// index entry of its bucket when there is one or room for one
// (t.DeadlineIndexed), else through an attempt timer.
func armDeadline(c *change, t *record.Task) {
	t.DeadlineIndexed = false
	bucket := record.DeadlineBucket(t.Deadline)
	s := c.state
	i := slices.IndexFunc(s.Deadlines, func(d runstate.DeadlineEntry) bool {
		return record.DeadlineBucket(d.Earliest).Equal(bucket)
	})
	switch {
	case i >= 0:
		if t.Deadline.Before(s.Deadlines[i].Earliest) {
			s.Deadlines[i].Earliest = t.Deadline
			putDeadline(c, bucket, t.Deadline)
		}
	case len(s.Deadlines) < maxDeadlineEntries:
		s.Deadlines = append(s.Deadlines, runstate.DeadlineEntry{Earliest: t.Deadline})
		putDeadline(c, bucket, t.Deadline)
	default:
		c.setTimer(record.Timer{RunID: t.RunID, Kind: record.TimerAttempt, Ref: t.TaskID, Due: t.Deadline, Token: t.Token})
		return
	}
	t.DeadlineIndexed = true
	c.dirty = true
}

// putDeadline writes the run's deadline index entry of bucket.
func putDeadline(c *change, bucket, earliest time.Time) {
	key := record.DeadlineKey(bucket, c.run.RunID)
	c.dropWrites(key)
	c.ops = append(c.ops, store.Put(key, record.AppendDeadline(nil, earliest)))
}

// clearDeadline removes what makes a claim's deadline fire, as the claim
// ends: its attempt timer. An indexed deadline leaves its entry alone; the
// entry finds no claim to time out when it fires, or the run's end removes
// it.
func clearDeadline(c *change, t *record.Task) {
	if t.DeadlineIndexed {
		return
	}
	c.clearTimer(t.Deadline, record.TimerAttempt, t.TaskID)
}

// dropDeadlines deletes every deadline index entry of the run, as it ends:
// no claim of an ended run times out.
func dropDeadlines(c *change) {
	for _, d := range c.state.Deadlines {
		c.del(record.DeadlineKey(record.DeadlineBucket(d.Earliest), c.run.RunID))
	}
	if c.state.Deadlines != nil {
		c.state.Deadlines = nil
		c.dirty = true
	}
}

// fireDueDeadlines fires every deadline index entry whose earliest deadline
// has passed.
func fireDueDeadlines(ctx context.Context, e *Engine) error {
	now := clockNow(e)
	start, end := record.DeadlineRange(now)
	var errs []error
	for {
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 256})
		if err != nil {
			return err
		}
		for _, it := range res.Items {
			if err := fireDeadlines(ctx, e, it.Key, it.Value, it.Version, now); err != nil {
				errs = append(errs, err)
			}
		}
		if res.Next == nil || len(errs) > 0 {
			return errors.Join(errs...)
		}
		start = append(res.Next, 0)
	}
}

// errDeadlinesMoved says a run's claims changed between the read of its
// tasks and its decision: the entry is looked at again next tick.
var errDeadlinesMoved = errors.New("the run's claims changed")

// fireDeadlines fires one deadline index entry when its earliest deadline
// has passed: every claim of the run whose deadline has passed times out,
// as its attempt timer would have timed it out (dueTimer.attemptTimedOut),
// in one batch that also moves the entry to the earliest deadline left in
// its bucket, or deletes it. The batch is conditional on the entry's
// version and on every claimed task's record as read, so two engines never
// fire one entry twice, and a report that lands first wins.
func fireDeadlines(ctx context.Context, e *Engine, key, value []byte, version uint64, now time.Time) error {
	bucket, runID, err := record.ParseDeadlineKey(key)
	if err != nil {
		e.log.Error("undecodable deadline index entry deleted", slog.String("key", string(key)))
		return deleteOrphan(ctx, e, key)
	}
	earliest, err := record.DecodeDeadline(value)
	if err != nil {
		e.log.Error("undecodable deadline index entry deleted", slog.String("key", string(key)))
		return deleteOrphan(ctx, e, key)
	}
	if earliest.After(now) {
		return nil
	}
	s, _, err := e.records.LoadCheckpoint(ctx, runID)
	if CodeOf(err) == CodeNotFound {
		return dropIfRunGone(ctx, e, runID, key)
	}
	if err != nil {
		return err
	}
	claims, err := loadClaims(ctx, e, s, bucket)
	if err != nil {
		return err
	}
	err = drive(ctx, e, runID, func(ch *change) error {
		ch.require(store.IfVersion(key, version))
		for _, id := range stepTaskIDs(ch.state) {
			if _, ok := claims[id]; !ok {
				return errDeadlinesMoved
			}
		}
		i := slices.IndexFunc(ch.state.Deadlines, func(d runstate.DeadlineEntry) bool {
			return record.DeadlineBucket(d.Earliest).Equal(bucket)
		})
		if ch.state.Status.Terminal() || i < 0 {
			ch.del(key)
			if i >= 0 {
				ch.state.Deadlines = slices.Delete(ch.state.Deadlines, i, i+1)
				ch.dirty = true
			}
			return nil
		}
		var left time.Time
		for _, id := range stepTaskIDs(ch.state) {
			cl := claims[id]
			if cl.task = taskIn(ch, cl.task, cl.version); !inBucket(cl.task, bucket) {
				continue
			}
			ch.require(cache.TaskUnchanged(id, cl.version))
			if cl.task.Deadline.After(ch.now) {
				if left.IsZero() || cl.task.Deadline.Before(left) {
					left = cl.task.Deadline
				}
				continue
			}
			if err := (dueTimer{ch}).attemptTimedOut(cl.task.Fresh(), cl.task.Token, "attempt exceeded its timeout_ms"); err != nil {
				return err
			}
		}
		if ch.state.Status.Terminal() {
			return nil // a timeout ended the run, which deleted its entries (dropDeadlines)
		}
		for _, t := range madeClaims(ch) { // a claim this decision made (none is expected of a timeout)
			if t.State == record.TaskClaimed && t.DeadlineIndexed && record.DeadlineBucket(t.Deadline).Equal(bucket) &&
				(left.IsZero() || t.Deadline.Before(left)) {
				left = t.Deadline
			}
		}
		i = slices.IndexFunc(ch.state.Deadlines, func(d runstate.DeadlineEntry) bool {
			return record.DeadlineBucket(d.Earliest).Equal(bucket)
		})
		switch {
		case i < 0:
			ch.del(key)
		case left.IsZero():
			ch.del(key)
			ch.state.Deadlines = slices.Delete(ch.state.Deadlines, i, i+1)
		default:
			ch.state.Deadlines[i].Earliest = left
			putDeadline(ch, bucket, left)
		}
		ch.dirty = true
		return nil
	})
	var cf *store.ConditionFailedError
	switch {
	case errors.Is(err, errDeadlinesMoved), errors.As(err, &cf):
		return nil // a claim moved on, or fired elsewhere: look again next tick
	case CodeOf(err) == CodeNotFound:
		return dropIfRunGone(ctx, e, runID, key)
	}
	return err
}

// deadlineClaim is a task of the run as read before its deadlines fire:
// task is nil unless the task is claimed with its deadline in the bucket.
type deadlineClaim struct {
	task    *record.Task
	version uint64
}

// loadClaims reads the task of every step of s, keeping those claimed with
// an indexed deadline in bucket: a task's record, or the claim its step
// keeps when it has none (cache.Records.Task).
func loadClaims(ctx context.Context, e *Engine, s *runstate.State, bucket time.Time) (map[string]deadlineClaim, error) {
	claims := make(map[string]deadlineClaim)
	for _, id := range stepTaskIDs(s) {
		t, version, err := e.records.Task(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			claims[id] = deadlineClaim{}
			continue
		}
		if err != nil {
			return nil, err
		}
		if inBucket(t, bucket) {
			claims[id] = deadlineClaim{task: t, version: version}
		} else {
			claims[id] = deadlineClaim{}
		}
	}
	return claims, nil
}

// inBucket reports whether t is claimed with an indexed deadline in bucket.
func inBucket(t *record.Task, bucket time.Time) bool {
	return t != nil && t.State == record.TaskClaimed && t.DeadlineIndexed && record.DeadlineBucket(t.Deadline).Equal(bucket)
}

// stepTaskIDs answers the ids of the tasks the run's steps hold (an
// activity's and a compensation's).
func stepTaskIDs(s *runstate.State) []string {
	var ids []string
	for _, st := range s.Steps {
		if st.TaskID != "" {
			ids = append(ids, st.TaskID)
		}
		if st.CompTaskID != "" {
			ids = append(ids, st.CompTaskID)
		}
	}
	return ids
}
