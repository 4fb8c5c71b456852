package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/pollers"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// queueNamed answers the listed queue named name, failing the test if none.
func queueNamed(t *testing.T, list []*QueueInfo, name string) *QueueInfo {
	t.Helper()
	for _, q := range list {
		if q.Queue == name {
			return q
		}
	}
	require.Failf(t, "queue not listed", "queue %q not in %d queues", name, len(list))
	return nil
}

func scenarioPollers_ListedPerQueueWithIdentityLastPollInFlightBacklogAndOldestAge(t *testing.T, b *bundle) {
	submitted := b.clock.Now()
	b.submit(seq("a"))
	b.submit(seq("a"))
	b.clock.Advance(3 * time.Second)
	task := b.poll("act-a") // w1 on the default queue
	_, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w2", Queue: "images", Activities: []string{"resize"}})
	require.NoError(t, err)
	polledAt := b.clock.Now()
	b.clock.Advance(2 * time.Second)

	list, err := b.eng.ListWorkers(b.ctx, ListWorkersParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list, 2)
	def := queueNamed(t, list, "default")
	require.Equal(t, 1, def.Backlog, "the second run's task is ready")
	require.False(t, def.BacklogCapped)
	require.Equal(t, submitted, def.OldestReady)
	require.Equal(t, 5*time.Second, def.OldestReadyAge)
	require.Equal(t, []PollerInfo{{WorkerID: "w1", LastPoll: polledAt, InFlight: 1, Activities: []string{"act-a"},
		Compensations: []string{}, Verifiable: []string{}}}, def.Pollers)
	images := queueNamed(t, list, "images")
	require.Zero(t, images.Backlog)
	require.True(t, images.OldestReady.IsZero())
	require.Len(t, images.Pollers, 1)
	require.Equal(t, "w2", images.Pollers[0].WorkerID)
	require.Zero(t, images.Pollers[0].InFlight)

	b.complete(task, `1`)
	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Equal(t, "default", q.Queue)
	require.Len(t, q.Pollers, 1)
	require.Zero(t, q.Pollers[0].InFlight, "a report ends the task's flight")

	other, err := b.eng.ListWorkers(b.ctx, ListWorkersParams{TenantID: "tenant-b"})
	require.NoError(t, err)
	require.Empty(t, other, "a tenant sees only its own queues")
	q, err = b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: "tenant-b", Queue: "images"})
	require.NoError(t, err)
	require.Empty(t, q.Pollers)
	require.Zero(t, q.Backlog)
}

func scenarioPollers_EveryEngineListsEveryPollerAndQuietOnesExpire(t *testing.T, b *bundle) {
	other, err := New(Config{Store: b.store, Clock: b.clock, Owner: "engine-b"})
	require.NoError(t, err)
	b.submit(seq("a"))
	task := b.poll("act-a") // polls b.eng
	polledAt := b.clock.Now()

	list, err := other.ListWorkers(b.ctx, ListWorkersParams{TenantID: tenant})
	require.NoError(t, err)
	require.Empty(t, list, "not yet written: the poll's engine writes it on its next tick")
	b.tick()
	q, err := other.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Equal(t, []PollerInfo{{WorkerID: "w1", LastPoll: polledAt, InFlight: 1, Activities: []string{"act-a"},
		Compensations: []string{}, Verifiable: []string{}}}, q.Pollers)

	// Reported to the other engine: the poll's engine finds out at its next refresh.
	_, err = other.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: []byte(`1`)})
	require.NoError(t, err)
	b.clock.Advance(b.eng.cfg.PollerRefresh)
	b.tick()
	q, err = other.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, q.Pollers, 1)
	require.Zero(t, q.Pollers[0].InFlight)

	// A worker that stops polling goes once the TTL has passed.
	b.clock.Advance(b.eng.cfg.PollerTTL)
	b.tick()
	q, err = other.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Empty(t, q.Pollers)
	requireNoKeys(t, b, keyspace.Poller.KeyPrefix())
}

func scenarioPollers_AStoppedProcessesRecordsExpireAndAreSwept(t *testing.T, b *bundle) {
	gone, err := New(Config{Store: b.store, Clock: b.clock, Owner: "engine-gone"})
	require.NoError(t, err)
	_, err = gone.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w9", Activities: []string{"x"}})
	require.NoError(t, err)
	require.NoError(t, gone.Tick(b.ctx))
	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, q.Pollers, 1, "the other engine's poller is listed from its record")

	// The engine "gone" never ticks again: its record expires after three refreshes.
	b.clock.Advance(3 * b.eng.cfg.PollerRefresh)
	q, err = b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Empty(t, q.Pollers, "an expired record is not listed")
	b.tick() // the first sweep is due at once
	requireNoKeys(t, b, keyspace.Poller.KeyPrefix())
}

func scenarioPollers_ANewerWeftdsRecordIsNeitherListedNorSwept(t *testing.T, b *bundle) {
	key := pollers.Key(tenant, "default", "w-new", "engine-newer")
	value := []byte(`{"version": 2, "tenant_id": "tenant-a", "queue": "default", "worker_id": "w-new", "expires_at": "2000-01-01T00:00:00Z"}`)
	_, err := b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(key, value)}})
	require.NoError(t, err)
	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Empty(t, q.Pollers, "a record of a newer version is refused, not guessed at")
	b.tick() // the first sweep is due at once
	item, err := b.store.Get(b.ctx, key)
	require.NoError(t, err, "a newer weftd's record is its to sweep")
	require.Equal(t, value, item.Value)
}

// requireNoKeys fails the test if any key begins with prefix.
func requireNoKeys(t *testing.T, b *bundle, prefix []byte) {
	t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: prefix})
	require.NoError(t, err)
	require.Empty(t, res.Items)
}

// TestListWorkers_CountsBacklogsWithinOneBudgetAcrossItsQueues: one listing
// counts at most its budget of ready entries over all its queues, and still
// finds each queue's oldest; a count cut short says so.
func TestListWorkers_CountsBacklogsWithinOneBudgetAcrossItsQueues(t *testing.T) {
	b := setup(t)
	defer func(was int) { listBacklogBudget = was }(listBacklogBudget)
	listBacklogBudget = 3
	for _, q := range []string{"q1", "q2", "q3"} {
		def := seq("a")
		def.Actions[0].Queue = q
		b.submit(def)
		b.submit(def)
	}
	list, err := b.eng.ListWorkers(b.ctx, ListWorkersParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list, 3)
	got := [][2]any{}
	for _, q := range list {
		got = append(got, [2]any{q.Backlog, q.BacklogCapped})
		require.False(t, q.OldestReady.IsZero(), "queue %s's oldest is found whatever the budget", q.Queue)
	}
	require.Equal(t, [][2]any{{2, false}, {1, true}, {1, true}}, got)
	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant, Queue: "q3"})
	require.NoError(t, err)
	require.Equal(t, 2, q.Backlog, "one queue's description has a budget of its own")
}
