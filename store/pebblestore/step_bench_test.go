package pebblestore_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/store"
)

// BenchmarkCommitStepShaped commits batches shaped like the engine's, from
// 16 goroutines, each driving runs one after another over a store that
// already holds 200k records of earlier runs: a run's submission (absent
// conditions on its request key and checkpoint), then five steps, each a
// version condition on the checkpoint and on the task, absent conditions on
// two events' idempotency keys, and puts of the checkpoint, two events, their
// idempotency keys, the next task and an outbox entry, deleting the task and
// the outbox entry of the step before (short-lived keys, as the export
// worker and the task completion delete them). One op is one commit. It
// reports the process's CPU per commit (Pebble's flushes and compactions
// included) beside the wall time.
func BenchmarkCommitStepShaped(b *testing.B) {
	s := open(b, b.TempDir())
	fill(b, s, 200_000)
	const goroutines = 16
	var next atomic.Int64
	var run atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	cpu0 := cpuTime()
	b.ResetTimer()
	for range goroutines {
		wg.Go(func() {
			for next.Load() < int64(b.N) {
				if err := driveRun(b, s, fmt.Sprintf("run-%d", run.Add(1)), &next); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(next.Load()), "cpu-µs/commit")
}

// fill writes n records of earlier runs, in batches of 1000.
func fill(b *testing.B, s store.Store, n int) {
	value := make([]byte, 200)
	for lo := 0; lo < n; lo += 1000 {
		batch := &store.Batch{}
		for i := lo; i < min(lo+1000, n); i++ {
			batch.Ops = append(batch.Ops, store.Put(store.Key("wf", fmt.Sprintf("old-%d", i/10), "ev", fmt.Sprint(i%10)), value))
		}
		if _, err := s.Commit(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// driveRun commits one run's submission and steps, counting each commit in
// done.
func driveRun(b *testing.B, s store.Store, id string, done *atomic.Int64) error {
	ckpt, rr := store.Key("wf", id, "ckpt"), store.Key("rr", "default", id)
	task := func(step int) []byte { return store.Key("task", fmt.Sprintf("%s-%d", id, step)) }
	outbox := func(step int) []byte { return store.Key("ob", id, fmt.Sprint(step)) }
	checkpoint, event := make([]byte, 300), make([]byte, 200)
	res, err := s.Commit(b.Context(), &store.Batch{
		Conditions: []store.Condition{store.IfAbsent(rr), store.IfAbsent(ckpt)},
		Ops:        []store.Op{store.Put(ckpt, checkpoint), store.Put(rr, []byte(id)), store.Put(task(0), event)},
	})
	if err != nil {
		return err
	}
	done.Add(1)
	ckptVersion, taskVersion := res.Versions[0], res.Versions[2]
	for step := range 5 {
		ek := func(i int) []byte { return store.Key("wf", id, "ek", fmt.Sprintf("%d-%d", step, i)) }
		ev := func(i int) []byte { return store.Key("wf", id, "ev", fmt.Sprintf("%d-%d", step, i)) }
		batch := &store.Batch{
			Conditions: []store.Condition{store.IfVersion(ckpt, ckptVersion), store.IfVersion(task(step), taskVersion), store.IfAbsent(ek(0)), store.IfAbsent(ek(1))},
			Ops: []store.Op{store.Put(ckpt, checkpoint), store.Delete(task(step)), store.Put(task(step+1), event),
				store.Put(ev(0), event), store.Put(ek(0), nil), store.Put(ev(1), event), store.Put(ek(1), nil), store.Put(outbox(step), event)},
		}
		if step > 0 {
			batch.Ops = append(batch.Ops, store.Delete(outbox(step-1)))
		}
		if res, err = s.Commit(b.Context(), batch); err != nil {
			return err
		}
		done.Add(1)
		ckptVersion, taskVersion = res.Versions[0], res.Versions[2]
	}
	return nil
}

// cpuTime answers the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
