package worker

import (
	"context"
	"maps"
	"sync"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// attributesKey holds the search attributes an activity sets.
type attributesKey struct{}

// attributes are the search attributes an activity set, reported with its
// result.
type attributes struct {
	mu  sync.Mutex
	set map[string]*weftv1.SearchAttributeValue
}

// withAttributes answers ctx with room for the activity's attributes.
func withAttributes(ctx context.Context) (context.Context, *attributes) {
	a := &attributes{}
	return context.WithValue(ctx, attributesKey{}, a), a
}

// get answers the attributes set, or nil.
func (a *attributes) get() map[string]*weftv1.SearchAttributeValue {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.set
}

// SetSearchAttributes sets search attributes on the task's run, reported
// with the activity's result and set in the result's own commit
// (docs/semantics.md#search-attributes); a later call's attribute of the
// same name wins. Build values with client.AttrKeyword, AttrInt,
// AttrDouble, AttrBool and AttrTime. It does nothing outside an activity,
// and when the activity fails.
func SetSearchAttributes(ctx context.Context, set map[string]*weftv1.SearchAttributeValue) {
	a, _ := ctx.Value(attributesKey{}).(*attributes)
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.set == nil {
		a.set = map[string]*weftv1.SearchAttributeValue{}
	}
	maps.Copy(a.set, set)
}
