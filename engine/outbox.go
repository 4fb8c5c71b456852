package engine

import (
	"encoding/json"

	"github.com/weft-dev/weft/store"
)

// OutboxEntry is an event waiting for export, with the tenant it belongs to
// (buses partition by tenant).
type OutboxEntry struct {
	TenantID string          `json:"tenant_id"`
	Event    json.RawMessage `json:"event"`
}

// outboxEntry encodes an OutboxEntry. event is the event's own encoding,
// which the engine just made with json.Marshal, so it is copied as it is:
// json.Marshal of the struct would re-validate and re-compact it.
func outboxEntry(tenantID string, event []byte) []byte {
	tenant, err := json.Marshal(tenantID)
	if err != nil {
		panic("engine: tenant id does not marshal: " + err.Error())
	}
	b := make([]byte, 0, len(`{"tenant_id":,"event":}`)+len(tenant)+len(event))
	b = append(b, `{"tenant_id":`...)
	b = append(b, tenant...)
	b = append(b, `,"event":`...)
	b = append(b, event...)
	return append(b, '}')
}

// OutboxPrefix is the key prefix of the transactional outbox, for export workers.
func OutboxPrefix() []byte { return store.KeyPrefix("ob") }
