package runlog

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// A decision that appends a run's first unexported events puts the run's
// one entry, from the first of them, on condition that it has none; one
// that appends more while it has one only asserts it. Either way one
// record per run of consecutive run_seqs holds the events.
func TestOutbox_ADecisionPutsItsRunsOneEntryOrAssertsIt(t *testing.T) {
	events := []runstate.Event{{RunID: "r", Seq: 3, IdempotencyKey: "a"}, {RunID: "r", Seq: 4, IdempotencyKey: "b"},
		{RunID: "r", Seq: 7, IdempotencyKey: "c"}}
	key := RunOutboxKey("r")
	require.Equal(t, "ob:r:", string(key), "the run's outbox prefix itself")

	b := &store.Batch{}
	AppendEvents(b, "t", events, OutboxPut, true)
	var entries []store.Op
	for _, op := range b.Ops {
		if string(op.Key[:3]) == "ob:" {
			entries = append(entries, op)
		}
	}
	require.Len(t, entries, 1, "one entry for the run")
	require.Equal(t, key, entries[0].Key)
	got, err := runcodec.DecodeOutboxRun(entries[0].Value)
	require.NoError(t, err)
	require.Equal(t, runcodec.OutboxRun{TenantID: "t", From: 3}, got)
	require.Contains(t, b.Conditions, store.IfAbsent(key))
	require.Len(t, b.Conditions, 4, "each event's idempotency key, and that the run has no entry")

	b = &store.Batch{}
	AppendEvents(b, "t", events, OutboxKept, false)
	require.Len(t, b.Ops, 2, "the records alone: the run's entry is written by no later decision")
	require.Equal(t, []store.Condition{store.IfPresent(key)}, b.Conditions, "that the run still has its entry")

	b = &store.Batch{}
	AppendEvents(b, "t", events, NoOutbox, true)
	require.Len(t, b.Ops, 5, "no outbox entry without export: one record per run of run_seqs, each event's key")
	require.Len(t, b.Conditions, 3)
}

func TestOutbox_AnOlderEntryResolvesFromTheCopyItHoldsByteForByte(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	event := []byte(`{"event_type":"RunStarted","event_id":"e-1","run_id":"r-1","run_seq":4,"data":{"reason":"<b>&"}}`)
	old := append(append([]byte(`{"tenant_id":"t","event":`), event...), '}') // as an older weftd wrote it
	got, err := ResolveOutbox(ctx, st, []store.Item{{Key: OutboxKey("r-1", 4), Value: old}})
	require.NoError(t, err)
	require.NoError(t, got[0].Err)
	require.Equal(t, []OutboxEvent{{TenantID: "t", EventID: "e-1", RunID: "r-1", RunSeq: 4, EventType: "RunStarted", Event: event}}, got[0].Events)
}

func TestOutbox_AnEntryThatCannotBeResolvedAnswersItsErrorAlone(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b := &store.Batch{}
	for seq := uint64(2); seq <= 4; seq++ {
		ev := runstate.Event{Type: runstate.EvRunStarted, ID: fmt.Sprintf("e-%d", seq), RunID: "r-1", Seq: seq, IdempotencyKey: "k"}
		b.Ops = append(b.Ops, store.Put(EventKey("r-1", seq), runcodec.AppendEvent(nil, &ev)))
	}
	_, err := st.Commit(ctx, b)
	require.NoError(t, err)
	one := runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t"})
	got, err := ResolveOutbox(ctx, st, []store.Item{
		{Key: OutboxKey("r-1", 1), Value: one}, // its event is not stored
		{Key: OutboxKey("r-1", 2), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: 4})}, // resolves
		{Key: OutboxKey("r-1", 3), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: 5})}, // 5 is missing
		{Key: OutboxKey("r-1", 6), Value: []byte("junk")},                                                               // poison
		{Key: []byte("ob:malformed"), Value: one},
		{Key: OutboxKey("r-1", 7), Value: []byte(`{"tenant_id":"t","event":{"event_id":"x"}}`)}, // no envelope
		{Key: OutboxKey("r-1", 8), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: 1 << 40})},
	})
	require.NoError(t, err)
	require.Len(t, got, 7)
	require.ErrorContains(t, got[0].Err, "not stored")
	require.NoError(t, got[1].Err)
	require.Len(t, got[1].Events, 3)
	for i, ev := range got[1].Events {
		require.Equal(t, uint64(2+i), ev.RunSeq, "in run_seq order")
		require.Equal(t, fmt.Sprintf("e-%d", 2+i), ev.EventID)
	}
	require.ErrorContains(t, got[2].Err, "run_seq 5")
	for _, i := range []int{3, 4, 5, 6} {
		require.Error(t, got[i].Err, "entry %d", i)
		require.Empty(t, got[i].Events)
	}
}

// A page's references are matched to the events read by walking both in
// order: an event missing or undecodable in one reference fails that entry
// alone, the entries after it (one naming an event another names too) get
// their own events, and each event's JSON stays its own while later ones
// are written.
func TestOutbox_EntriesResolveInStepAroundMissingAndUndecodableEvents(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b := &store.Batch{}
	want := map[uint64][]byte{}
	for seq := uint64(1); seq <= 7; seq++ {
		switch seq {
		case 2: // missing
			continue
		case 4:
			b.Ops = append(b.Ops, store.Put(EventKey("r-1", seq), []byte{0xff, 0x01}))
			continue
		}
		ev := runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("e-%d", seq), RunID: "r-1", Seq: seq, StepID: fmt.Sprintf("step-%d", seq)}
		b.Ops = append(b.Ops, store.Put(EventKey("r-1", seq), runcodec.AppendEvent(nil, &ev)))
		js, err := json.Marshal(&ev)
		require.NoError(t, err)
		want[seq] = js
	}
	_, err := st.Commit(ctx, b)
	require.NoError(t, err)
	ref := func(first, last uint64) store.Item {
		return store.Item{Key: OutboxKey("r-1", first), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: last})}
	}
	got, err := ResolveOutbox(ctx, st, []store.Item{ref(1, 3), ref(4, 5), ref(6, 7), ref(6, 6), ref(5, 5)})
	require.NoError(t, err)
	require.ErrorContains(t, got[0].Err, "run_seq 2")
	require.ErrorContains(t, got[1].Err, "event 4")
	for i, seqs := range map[int][]uint64{2: {6, 7}, 3: {6}, 4: {5}} {
		require.NoError(t, got[i].Err, "entry %d", i)
		require.Len(t, got[i].Events, len(seqs))
		for j, seq := range seqs {
			require.Equal(t, seq, got[i].Events[j].RunSeq)
			require.Equal(t, fmt.Sprintf("e-%d", seq), got[i].Events[j].EventID)
			require.Equal(t, string(want[seq]), string(got[i].Events[j].Event))
			require.Equal(t, len(got[i].Events[j].Event), cap(got[i].Events[j].Event), "an event's JSON is a full slice")
		}
	}
}

func TestAppendEvents_ARecordAndEachKeyRowHoldTheirOwnValues(t *testing.T) {
	events := make([]runstate.Event, 40) // enough to outgrow the values' shared buffer
	for i := range events {
		seq := uint64(i + 1)
		if i >= 20 {
			seq += 10 // a gap: a second record
		}
		events[i] = runstate.Event{Type: runstate.EvStepStarted, RunID: "r", Seq: seq, IdempotencyKey: fmt.Sprint("k", i),
			StepID: fmt.Sprintf("step-%d-%s", i, string(make([]byte, i*13)))}
	}
	b := &store.Batch{}
	AppendEvents(b, "t", events, NoOutbox, true)
	require.Len(t, b.Ops, 2+len(events))
	for r, want := range [][]runstate.Event{events[:20], events[20:]} {
		op := b.Ops[r]
		require.Equal(t, string(EventKey("r", want[len(want)-1].Seq)), string(op.Key), "a record is keyed by its last run_seq")
		got, err := runcodec.DecodeEvents(op.Value, "r", nil)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, len(op.Value), cap(op.Value), "a value cannot be appended into the next")
	}
	for i := range events {
		op := b.Ops[2+i]
		require.Equal(t, string(idemKey("r", events[i].IdempotencyKey)), string(op.Key))
		require.Equal(t, store.Uint64(events[i].Seq), string(op.Value), "the key's row holds its event's run_seq")
		require.Equal(t, len(op.Value), cap(op.Value), "a value cannot be appended into the next")
	}
}

// TestAppendEvents_ADecisionsEventsAreOneRecordAndNoCondition: for a run
// whose checkpoint records its keys, a decision's events are one row; a
// decision's one event is stored alone, as before groups.
func TestAppendEvents_ADecisionsEventsAreOneRecordAndNoCondition(t *testing.T) {
	events := make([]runstate.Event, 5)
	for i := range events {
		events[i] = runstate.Event{Type: runstate.EvStepStarted, RunID: "r", Seq: uint64(i + 1), IdempotencyKey: fmt.Sprint("k", i), StepID: "a"}
	}
	b := &store.Batch{}
	AppendEvents(b, "t", events, NoOutbox, false)
	require.Empty(t, b.Conditions)
	require.Len(t, b.Ops, 1)
	require.Equal(t, string(EventKey("r", 5)), string(b.Ops[0].Key))
	require.True(t, runcodec.IsEventGroup(b.Ops[0].Value))
	got, err := runcodec.DecodeEvents(b.Ops[0].Value, "r", nil)
	require.NoError(t, err)
	require.Equal(t, events, got)

	b = &store.Batch{}
	AppendEvents(b, "t", events[2:3], NoOutbox, false)
	require.Len(t, b.Ops, 1)
	require.Equal(t, string(EventKey("r", 3)), string(b.Ops[0].Key))
	require.Equal(t, runcodec.FormatEvent, b.Ops[0].Value[0], "one event is its own record")
}

// ReadEvents answers the events after a watermark, page by page, whether
// they are stored one per record (as an older weftd stored them), in
// groups, or both in one run, with the same run_seqs: a watermark inside a
// group skips the group's earlier events, and a page ends inside a group.
func TestReadEvents_PagesThroughGroupsAndSingleRecordsAlike(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	var all []runstate.Event
	b := &store.Batch{}
	decision := func(n int) {
		events := make([]runstate.Event, n)
		for i := range events {
			seq := uint64(len(all) + 1)
			events[i] = runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprint("e-", seq), RunID: "r", Seq: seq, StepID: "s"}
			all = append(all, events[i])
		}
		AppendEvents(b, "t", events, NoOutbox, false)
	}
	for seq := 1; seq <= 3; seq++ { // as an older weftd wrote them: one record each
		ev := runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprint("e-", seq), RunID: "r", Seq: uint64(seq), StepID: "s"}
		b.Ops = append(b.Ops, store.Put(EventKey("r", uint64(seq)), runcodec.AppendEvent(nil, &ev)))
		all = append(all, ev)
	}
	decision(4)
	decision(1)
	decision(5)
	_, err := st.Commit(ctx, b)
	require.NoError(t, err)
	for after := 0; after <= len(all); after++ {
		for _, limit := range []int{1, 2, 3, 100} {
			var got []runstate.Event
			from := uint64(after)
			for {
				page, more, err := ReadEvents(ctx, st, "r", from, limit)
				require.NoError(t, err)
				require.LessOrEqual(t, len(page), limit)
				got = append(got, page...)
				if !more {
					break
				}
				require.NotEmpty(t, page, "more follow only after a page with events")
				from = page[len(page)-1].Seq
			}
			require.Equal(t, len(all)-after, len(got), "after %d, pages of %d", after, limit)
			if len(got) > 0 {
				require.Equal(t, all[after:], got, "after %d, pages of %d", after, limit)
			}
		}
	}
}

// A grouped outbox entry resolves from its one record, in run_seq order;
// one whose record is missing, or holds a different count, fails alone.
func TestOutbox_AGroupedEntryResolvesFromItsOneRecord(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b := &store.Batch{}
	events := make([]runstate.Event, 3)
	for i := range events {
		events[i] = runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprint("e-", i+2), RunID: "r-1", Seq: uint64(i + 2), StepID: "s"}
	}
	olderAppend(b, "t", events, false)
	_, err := st.Commit(ctx, b)
	require.NoError(t, err)
	entry, err := st.Get(ctx, OutboxKey("r-1", 2))
	require.NoError(t, err)
	grouped := func(first, last uint64) store.Item {
		return store.Item{Key: OutboxKey("r-1", first), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: last, Grouped: true})}
	}
	got, err := ResolveOutbox(ctx, st, []store.Item{entry, grouped(1, 4), grouped(5, 9)})
	require.NoError(t, err)
	require.NoError(t, got[0].Err)
	require.Len(t, got[0].Events, 3)
	for i, ev := range got[0].Events {
		require.Equal(t, uint64(2+i), ev.RunSeq)
		js, err := json.Marshal(&events[i])
		require.NoError(t, err)
		require.Equal(t, string(js), string(ev.Event))
	}
	require.ErrorContains(t, got[1].Err, "holds 3")
	require.ErrorContains(t, got[2].Err, "not stored")
}

func TestEventWrites_CountsTheWritesAppendEventsAdds(t *testing.T) {
	ev := func(seq uint64) runstate.Event {
		return runstate.Event{RunID: "r", Seq: seq, IdempotencyKey: fmt.Sprint("k", seq)}
	}
	for _, tc := range []struct {
		name   string
		events []runstate.Event
	}{
		{"none", nil},
		{"one", []runstate.Event{ev(1)}},
		{"consecutive", []runstate.Event{ev(3), ev(4), ev(5)}},
		{"with gaps", []runstate.Event{ev(3), ev(4), ev(7), ev(9), ev(10)}},
	} {
		for _, outbox := range []OutboxWrite{NoOutbox, OutboxPut, OutboxKept} {
			for _, keyRows := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/outbox=%v/keyRows=%v", tc.name, outbox, keyRows), func(t *testing.T) {
					b := &store.Batch{}
					AppendEvents(b, "t", tc.events, outbox, keyRows)
					writes, conds := EventWrites(tc.events, outbox, keyRows)
					require.Equal(t, len(b.Ops), writes)
					require.Equal(t, len(b.Conditions), conds)
				})
			}
		}
	}
}

// ResolveOutboxInto answers in the buffers it is given: the answer is what
// ResolveOutbox answers, it stays as it is while other buffers are used,
// and the next call given the same buffers writes over it instead of
// allocating again.
func TestResolveOutboxInto_AnswersInItsBuffersWhichOnlyTheNextCallGivenThemReuses(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	pages := make([][]store.Item, 2)
	for r := range 20 {
		events := make([]runstate.Event, 4)
		for i := range events {
			events[i] = runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("e-%d-%d", r, i), RunID: fmt.Sprintf("run-%02d", r),
				Seq: uint64(1 + i), StepID: fmt.Sprintf("step-%d", r)}
		}
		b := &store.Batch{}
		olderAppend(b, "t", events, false)
		_, err := st.Commit(ctx, b)
		require.NoError(t, err)
		it, err := st.Get(ctx, OutboxKey(events[0].RunID, 1))
		require.NoError(t, err)
		pages[r%2] = append(pages[r%2], it)
	}
	snapshot := func(got []ResolvedEntry) []string {
		var out []string
		for _, e := range got {
			require.NoError(t, e.Err)
			for _, ev := range e.Events {
				out = append(out, fmt.Sprintf("%s %s %d %s", ev.EventID, ev.RunID, ev.RunSeq, ev.Event))
			}
		}
		return out
	}
	want := make([][]string, 2)
	for i, page := range pages {
		got, err := ResolveOutbox(ctx, st, page)
		require.NoError(t, err)
		want[i] = snapshot(got)
	}
	var mine, others OutboxBuffers
	first, err := ResolveOutboxInto(ctx, st, pages[0], &mine)
	require.NoError(t, err)
	require.Equal(t, want[0], snapshot(first))
	_, err = ResolveOutboxInto(ctx, st, pages[1], &others)
	require.NoError(t, err)
	require.Equal(t, want[0], snapshot(first), "other buffers leave an answer as it is")
	second, err := ResolveOutboxInto(ctx, st, pages[1], &mine)
	require.NoError(t, err)
	require.Equal(t, want[1], snapshot(second))
	require.Same(t, &first[0], &second[0], "the same buffers answer in the same memory")

	fresh := testing.AllocsPerRun(20, func() { _, _ = ResolveOutbox(ctx, st, pages[1]) })
	reused := testing.AllocsPerRun(20, func() { _, _ = ResolveOutboxInto(ctx, st, pages[1], &mine) })
	require.Less(t, reused, fresh-3, "the entries, their events and their JSON are not allocated again")
}

// An event record's key names its run, which EventKeyRun answers (the
// reader of a group of deltas names it); any other key names none.
func TestEventKeyRun_AnswersTheRunAnEventKeyNames(t *testing.T) {
	require.Equal(t, "run-1", EventKeyRun(EventKey("run-1", 7)))
	require.Equal(t, "a:b", EventKeyRun(EventKey("a:b", 7)), "a run id the key escapes")
	for _, key := range [][]byte{CheckpointKey("run-1"), EventPrefix("run-1"), []byte("wf:"), nil, OutboxKey("run-1", 7)} {
		require.Empty(t, EventKeyRun(key), "%q", key)
	}
}
