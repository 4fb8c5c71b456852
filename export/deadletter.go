package export

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/store"
)

// DeadLetterItem is a dead-letter record with its key and version.
type DeadLetterItem struct {
	Key     []byte
	Version uint64
	DeadLetter
}

// ListDeadLettersParams selects a page of dead-letter records.
type ListDeadLettersParams struct {
	// After resumes a listing: pass the previous page's Next.
	After []byte
	// Limit is the most records answered; 0 means store.DefaultScanLimit.
	Limit int
}

// ListDeadLetters answers dead-letter records in key order (by run, then
// run_seq), and the cursor of the next page (nil at the end).
func ListDeadLetters(ctx context.Context, st store.Store, params *ListDeadLettersParams) ([]DeadLetterItem, []byte, error) {
	page, err := st.Scan(ctx, &store.ScanParams{Prefix: DeadLetterPrefix(), After: params.After, Limit: params.Limit})
	if err != nil {
		return nil, nil, fmt.Errorf("export: list dead letters: %w", err)
	}
	out := make([]DeadLetterItem, 0, len(page.Items))
	for _, it := range page.Items {
		var d DeadLetter
		if err := json.Unmarshal(it.Value, &d); err != nil {
			return nil, nil, fmt.Errorf("export: dead-letter record %s: %w", it.Key, err)
		}
		out = append(out, DeadLetterItem{Key: it.Key, Version: it.Version, DeadLetter: d})
	}
	return out, page.Next, nil
}

// Replay moves a dead-letter record back into the outbox, with a fresh
// attempt count, in one conditional batch: the record must be unchanged and
// the outbox keys free, or it fails with store.ErrConditionFailed. The
// worker then publishes the entry like any other; an entry that named
// several events goes back as one entry per event, each holding its event.
// Replay a poison entry only after repairing its record (RawEntry or Entry
// must decode).
func Replay(ctx context.Context, st store.Store, dlqKey []byte) error {
	it, err := st.Get(ctx, dlqKey)
	if err != nil {
		return fmt.Errorf("export: replay %s: %w", dlqKey, err)
	}
	var d DeadLetter
	if err := json.Unmarshal(it.Value, &d); err != nil {
		return fmt.Errorf("export: replay %s: %w", dlqKey, err)
	}
	entry := []byte(d.Entry)
	if entry == nil {
		entry = d.RawEntry
	}
	ob := OutboxKeyOfDeadLetter(dlqKey)
	if runlog.IsRunEntry(entry) {
		ob = runlog.RunOutboxKey(runOf(ob)) // a run's entry goes back as the run's entry
	}
	b := &store.Batch{
		Conditions: []store.Condition{store.IfVersion(dlqKey, it.Version), store.IfAbsent(ob)},
		Ops:        []store.Op{store.Delete(dlqKey), store.Delete(retryKeyOf(ob))},
	}
	if len(d.Events) == 0 {
		b.Ops = append(b.Ops, store.Put(ob, entry))
	}
	for _, ev := range d.Events {
		key := OutboxKey(runOf(ob), ev.RunSeq)
		if string(key) != string(ob) { // the entry's own key is conditioned above
			b.Conditions = append(b.Conditions, store.IfAbsent(key))
		}
		b.Ops = append(b.Ops, store.Put(key, ev.Entry))
	}
	if _, err := st.Commit(ctx, b); err != nil {
		return fmt.Errorf("export: replay %s: %w", dlqKey, err)
	}
	return nil
}
