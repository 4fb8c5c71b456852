package engine

import (
	"context"
	"log/slog"
	"sync"
)

// alertRecorder keeps the alerts an engine raised.
type alertRecorder struct {
	mu    sync.Mutex
	items []recordedAlert
}

type recordedAlert struct {
	name  string
	attrs map[string]string
}

func (r *alertRecorder) record(_ context.Context, name string, attrs ...slog.Attr) {
	m := map[string]string{}
	for _, a := range attrs {
		m[a.Key] = a.Value.String()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, recordedAlert{name, m})
}

func (r *alertRecorder) named(name string) []recordedAlert {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recordedAlert
	for _, a := range r.items {
		if a.name == name {
			out = append(out, a)
		}
	}
	return out
}

func (r *alertRecorder) count(name string) int { return len(r.named(name)) }
