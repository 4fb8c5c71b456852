package engine_test

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/server"
)

// init turns the server's proto schema on for every engine test: each event
// every scenario appends is validated before it is persisted, so a rule the
// engine's events do not meet fails the suite.
func init() {
	v, err := server.NewEventValidator()
	if err != nil {
		panic(err)
	}
	engine.ScenarioEventValidator = v
}
