package server

import (
	"sync"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// The definition's conversion back to the API's is eventpb's, shared with
// cmd/weft (which sends a definition read from YAML).
var (
	definitionProto = eventpb.DefinitionProto
	retryProto      = eventpb.RetryProto
	secretsProto    = eventpb.SecretsProto
)

// sharedDefinitionProto answers definitionProto(d) for a run's answer: the
// one definitionProtos built for d's definition when it has one, shared by
// every answer that carries it. The message is never changed once built:
// Connect only reads an answer, to encode it (binary encoding caches sizes
// in it atomically; proto.Marshal of one message from many goroutines is
// safe), and no handler or interceptor of this package writes a run's
// definition after runProto.
func sharedDefinitionProto(d definition.Definition) *weftv1.WorkflowDefinition {
	return definitionProtos.get(d)
}

// definitionCache remembers the messages it built for definitions by the
// array of their actions: the runs of one definition share its actions
// (engine/definition's Prepared, which every run the process submits holds
// and nothing changes), so a run's answer finds its definition's message
// without converting it again. An entry holds the definition it was built
// from, so its actions' array stays alive and its address names no other
// array while the entry is kept; a definition is served an entry only when
// definition.Equal to the entry's (which also compares the fields beside
// the actions). A definition without actions is converted each time. It is
// bounded: when full, an entry is dropped for each one added.
type definitionCache struct {
	max     int
	mu      sync.RWMutex
	entries map[*definition.Action]*definitionEntry
}

// definitionEntry is a definition and its message, never changed once made.
type definitionEntry struct {
	def definition.Definition
	out *weftv1.WorkflowDefinition
}

// definitionProtosSize bounds definitionProtos: the distinct definitions
// whose runs are answered, not the runs (engine/submitrun.go bounds its
// prepared definitions alike).
const definitionProtosSize = 256

var definitionProtos = newDefinitionCache(definitionProtosSize)

func newDefinitionCache(max int) *definitionCache {
	return &definitionCache{max: max, entries: make(map[*definition.Action]*definitionEntry)}
}

// get answers definitionProto(d), from the cache when d's actions were
// converted before.
func (c *definitionCache) get(d definition.Definition) *weftv1.WorkflowDefinition {
	if len(d.Actions) == 0 {
		return definitionProto(d)
	}
	key := &d.Actions[0]
	c.mu.RLock()
	e := c.entries[key]
	c.mu.RUnlock()
	if e != nil && definition.Equal(&e.def, &d) {
		return e.out
	}
	e = &definitionEntry{def: d, out: definitionProto(d)}
	c.mu.Lock()
	definition.PutBounded(c.entries, key, e, c.max)
	c.mu.Unlock()
	return e.out
}
