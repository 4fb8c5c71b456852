package server

import (
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runstate"
)

// EventJSON answers an event exactly as the API serves it in JSON: the proto
// Event with proto field names (docs/events/*.schema.json describe it).
func EventJSON(ev *runstate.Event) ([]byte, error) {
	return jsonMarshal.Marshal(eventpb.Event(ev))
}
