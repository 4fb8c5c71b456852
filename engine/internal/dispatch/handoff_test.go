package dispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// task stands for the engine's claimed task.
type task struct{ id string }

func newTestDispatcher() *Dispatcher[*task] {
	return New(Config[*task]{Now: time.Now, Interval: time.Hour, GiveBack: func([]*task) {}})
}

func TestHandOff_APollLeavingWhileItsSlotIsReservedGetsTheOutcome(t *testing.T) {
	d := newTestDispatcher()
	queue := QueueKey("t", "q")
	names := map[string]bool{"a:x": true}
	for _, committed := range []bool{true, false} {
		t.Run(fmt.Sprint("committed=", committed), func(t *testing.T) {
			s := d.SlotFor(context.Background(), queue, "w", names, 1)
			d.Open(s)
			require.Same(t, s, d.Reserve(nil, queue, "a:x"))
			require.Nil(t, d.Reserve(nil, queue, "a:x"), "a slot is given no more tasks than its poll asked for")
			left := make(chan []*task, 1)
			go func() { left <- d.Close(s) }()
			time.Sleep(20 * time.Millisecond) // the poll waits for the decision
			select {
			case <-left:
				t.Fatal("a poll left before the decision holding its slot ended")
			default:
			}
			eff := &Effects[*task]{HandOffs: []HandOff[*task]{{Slot: s, Task: &task{id: "t"}}}}
			d.Settle(eff, committed)
			if committed {
				got := <-left
				require.Len(t, got, 1, "a leaving poll answers the task it was handed")
				require.Equal(t, "t", got[0].id)
			} else {
				require.Empty(t, <-left)
				require.Nil(t, d.Reserve(nil, queue, "a:x"), "a slot whose poll left is not listed again")
			}
		})
	}
}

func TestHandOff_APollIsHandedNoMoreTasksThanItAsksFor(t *testing.T) {
	d := newTestDispatcher()
	queue := QueueKey("t", "q")
	s := d.SlotFor(context.Background(), queue, "w", map[string]bool{"a:x": true}, 3)
	d.Open(s)
	require.Equal(t, 1, d.Hold(s, 1), "its own scan claims one")
	require.Same(t, s, d.Reserve(nil, queue, "a:x"))
	require.Same(t, s, d.Reserve(nil, queue, "a:x"))
	require.Nil(t, d.Reserve(nil, queue, "a:x"), "three in all")
	require.Zero(t, d.Hold(s, 1))
	d.Settle(&Effects[*task]{HandOffs: []HandOff[*task]{{Slot: s}}}, false)
	require.Same(t, s, d.Reserve(nil, queue, "a:x"), "released room is offered again")
}

func TestHandOff_AnEagerSlotIsServedFirstAndNeverListed(t *testing.T) {
	d := newTestDispatcher()
	queue := QueueKey("t", "q")
	names := map[string]bool{"a:x": true}
	waiting := d.SlotFor(context.Background(), queue, "w", names, 1)
	d.Open(waiting)
	eager := d.SlotFor(context.Background(), queue, "e", names, 1)
	require.Same(t, eager, d.Reserve(eager, queue, "a:x"), "the reporting worker's slot first")
	require.Equal(t, 1, d.WaitingPolls(), "an eager slot is never listed")
	require.Same(t, waiting, d.Reserve(eager, queue, "a:x"), "then the waiting poll")
	require.Nil(t, d.Reserve(nil, queue, "a:x"), "both are full")
}
