package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
)

// A decision that does not commit is made again from the store's state. The
// task record a timer's decision marks lost is the decision's own copy, so
// the decision made again still sees the claim and times it out: it must not
// delete the timer and leave the attempt claimed by a worker that is gone.
func TestTimer_AnAttemptTimeoutMadeAgainAfterAFailedCommitStillTimesTheAttemptOut(t *testing.T) {
	for _, fault := range []faultstore.Fault{faultstore.Retryable, faultstore.BeforeCommit} {
		t.Run(fault.String(), func(t *testing.T) {
			fs, err := faultstore.New(memstore.New(memstore.Config{}), faultstore.Config{})
			require.NoError(t, err)
			b := setupWith(t, fs)
			def := seq("a")
			def.Actions[0].Timeout = definition.Ms(5000)
			run := b.submit(def)
			b.poll("act-a")
			b.clock.Advance(5 * time.Second)
			fs.InjectNext(fault)
			_ = b.eng.Tick(b.ctx) // a BeforeCommit fault surfaces; the timer stays for the next tick
			b.tick()
			snap := b.run(run.RunID)
			require.Len(t, snap.Step("a").Attempts, 1)
			require.Equal(t, runstate.AttemptTimedOut, snap.Step("a").Attempts[0].Outcome, "the attempt timed out")
			b.clock.Advance(time.Second)
			b.tick()
			b.complete(b.poll("act-a"), `2`)
			require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
		})
	}
}
