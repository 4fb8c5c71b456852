package view

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// recordVersion is the persisted format of a view record
// (docs/persisted-format.md).
const recordVersion = 1

// Limits on a listing's page.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Filters are the runs list's filters besides the query.
type Filters struct {
	// Statuses are run statuses by their API names ("RUNNING"); empty: any.
	Statuses      []string  `json:"statuses,omitempty"`
	PlanID        string    `json:"plan_id,omitempty"`
	CreatedAfter  time.Time `json:"created_after,omitzero"`
	CreatedBefore time.Time `json:"created_before,omitzero"`
	RunIDContains string    `json:"run_id_contains,omitempty"`
}

// View is one saved view.
type View struct {
	Name    string    `json:"name"`
	Query   string    `json:"query,omitempty"`
	Filters Filters   `json:"filters"`
	SavedBy string    `json:"saved_by,omitempty"`
	SavedAt time.Time `json:"saved_at"`
}

// record is a view as stored.
type record struct {
	FormatVersion int `json:"version"`
	View
}

// ErrNotFound is a view name the tenant has no view of.
var ErrNotFound = errors.New("view: not found")

// Views reads and writes saved views in a store.
type Views struct {
	store store.Store
	now   func() time.Time
}

// New answers the views kept in st.
func New(st store.Store) *Views {
	return &Views{store: st, now: time.Now}
}

func key(tenant, name string) []byte { return keyspace.View.Key(tenant, name) }

// Save stores v under its name in tenant's views, saved by savedBy now, and
// answers it as stored and whether no view had the name before.
func (s *Views) Save(ctx context.Context, tenant string, v View, savedBy string) (*View, bool, error) {
	k := key(tenant, v.Name)
	_, err := s.store.Get(ctx, k)
	created := errors.Is(err, store.ErrNotFound)
	if err != nil && !created {
		return nil, false, err
	}
	v.SavedBy, v.SavedAt = savedBy, s.now().UTC().Truncate(time.Millisecond)
	body, err := json.Marshal(record{FormatVersion: recordVersion, View: v})
	if err != nil {
		return nil, false, err
	}
	if err := commit(ctx, s.store, store.Put(k, body)); err != nil {
		return nil, false, err
	}
	return &v, created, nil
}

// Delete removes tenant's view of name; ErrNotFound when there is none.
func (s *Views) Delete(ctx context.Context, tenant, name string) error {
	k := key(tenant, name)
	if _, err := s.store.Get(ctx, k); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		return err
	}
	return commit(ctx, s.store, store.Delete(k))
}

// commit writes op in one batch with the call's audit record.
func commit(ctx context.Context, st store.Store, op store.Op) error {
	b := &store.Batch{Ops: []store.Op{op}}
	settleRider := store.Ride(ctx, b)
	_, err := st.Commit(ctx, b)
	settleRider(err)
	return err
}

// List answers a page of tenant's views by name, and the token of the next
// page ("" on the last): the page token is the last name answered.
func (s *Views) List(ctx context.Context, tenant string, pageSize int, pageToken string) ([]View, string, error) {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	pageSize = min(pageSize, MaxPageSize)
	params := &store.ScanParams{Prefix: keyspace.View.KeyPrefix(tenant), Limit: pageSize}
	if pageToken != "" {
		params.After = key(tenant, pageToken)
	}
	res, err := s.store.Scan(ctx, params)
	if err != nil {
		return nil, "", err
	}
	out := make([]View, 0, len(res.Items))
	for _, item := range res.Items {
		var r record
		if err := json.Unmarshal(item.Value, &r); err != nil {
			return nil, "", fmt.Errorf("view record %q: %w", item.Key, err)
		}
		if r.FormatVersion > recordVersion {
			return nil, "", fmt.Errorf("view record %q has format version %d; this weftd reads up to %d", item.Key, r.FormatVersion, recordVersion)
		}
		out = append(out, r.View)
	}
	if res.Next == nil || len(out) == 0 {
		return out, "", nil
	}
	return out, out[len(out)-1].Name, nil
}
