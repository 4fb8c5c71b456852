package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
)

// A poll starts its scan past the entries of tasks already claimed
// (queueHints); a task whose entry sorts before them — here because the
// clock stepped back, as after an NTP correction — must still be found.
func scenarioPoll_FindsATaskWhoseEntrySortsBeforeClaimedOnes(t *testing.T, b *bundle) {
	first := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `{}`)
	b.pollNone("act-a") // an empty scan may move the hint to now
	require.Equal(t, runstate.RunCompleted, b.run(first.RunID).Status)

	b.clock.Advance(-time.Hour)
	b.pollNone("act-a") // the hint now lies past this poll's now: nothing to scan, no error
	second := b.submit(seq("a"))
	task := b.poll("act-a")
	require.Equal(t, second.RunID, task.RunID)
	b.complete(task, `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(second.RunID).Status)
}

// Many submitters and pollers race on one queue of a single-owner Pebble
// engine, whose polls start from the hint: every task is claimed exactly
// once and every run completes.
func TestPoll_ConcurrentInsertsAndClaimsLoseNoTask(t *testing.T) {
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	b := setupWith(t, st, func(c *Config) { c.Clock = SystemClock{} })
	const runs, steps, pollers = 60, 3, 8
	var (
		mu      sync.Mutex
		claimed = map[string]bool{}
		done    sync.WaitGroup
		stop    = make(chan struct{})
	)
	for range pollers {
		done.Add(1)
		go func() {
			defer done.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w", MaxTasks: 3,
					Activities: []string{"act-s0", "act-s1", "act-s2"}, Wait: 20 * time.Millisecond})
				if err != nil {
					t.Error(err)
					return
				}
				for _, task := range tasks {
					mu.Lock()
					dup := claimed[task.TaskID]
					claimed[task.TaskID] = true
					mu.Unlock()
					if dup {
						t.Errorf("task %s claimed twice", task.TaskID)
					}
					if _, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w"}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	ids := make([]string, runs)
	var submit sync.WaitGroup
	for i := range runs {
		submit.Add(1)
		go func() {
			defer submit.Done()
			ids[i] = b.submit(seq("s0", "s1", "s2")).RunID
		}()
	}
	submit.Wait()
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if b.run(id).Status != runstate.RunCompleted {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "every run completes")
	close(stop)
	done.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, claimed, runs*steps, fmt.Sprintf("%d runs of %d steps", runs, steps))
}

// A poll claims several tasks at once; when one claim fails to commit, the
// poll still answers the tasks it did claim (their claims are durable: a
// lost answer would strand them until their attempt timeout), never the one
// that failed, which stays ready for the next poll.
func TestPoll_AFailedClaimAnswersTheOthersAndLeavesItReady(t *testing.T) {
	fs, err := faultstore.New(memstore.New(memstore.Config{}), faultstore.Config{})
	require.NoError(t, err)
	b := setupWith(t, fs)
	runs := map[string]bool{}
	for range 3 {
		runs[b.submit(seq("a")).RunID] = true
	}
	fs.InjectNext(faultstore.BeforeCommit)
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-a"}, MaxTasks: 3})
	require.NoError(t, err)
	require.Len(t, tasks, 2, "two of three claims committed")
	for _, task := range tasks {
		require.True(t, runs[task.RunID])
		delete(runs, task.RunID)
		b.complete(task, `{}`)
	}
	last := b.poll("act-a")
	require.True(t, runs[last.RunID], "the task whose claim failed is still ready")
	b.complete(last, `{}`)
}
