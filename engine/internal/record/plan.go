package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
)

// PlanVersion is the format version of a plan record.
const PlanVersion = 1

// Plan is a tenant's plan record (pl:{tenant}:{plan_sha256}): the definition
// of every run of that tenant whose plan SHA-256 it is, stored once for
// them all. It is written by the first submission of the plan, on an
// absent-condition, and never changed: its content is what its key's
// SHA-256 names.
type Plan struct {
	// Definition is the definition with every default applied.
	Definition definition.Definition
}

// storedPlan is a plan record as stored. Definition is the definition's
// canonical JSON (definition.Prepared.JSON), as it is: its SHA-256 is the
// key's, which a reader checks.
type storedPlan struct {
	FormatVersion int             `json:"version"`
	Definition    json.RawMessage `json:"definition"`
}

// PlanKey is where a tenant's plan of that SHA-256 is stored.
func PlanKey(tenant, planSHA256 string) []byte { return keyspace.Plan.Key(tenant, planSHA256) }

// EncodePlan answers the plan record of a definition, given its canonical
// JSON (definition.Prepared.JSON).
func EncodePlan(definitionJSON []byte) []byte {
	b := make([]byte, 0, len(`{"version":1,"definition":}`)+len(definitionJSON))
	b = append(b, `{"version":1,"definition":`...)
	b = append(b, definitionJSON...)
	return append(b, '}')
}

// ErrPlanMismatch is a plan record whose definition is not the one its
// SHA-256 names: it is never answered as the plan.
var ErrPlanMismatch = errors.New("plan record does not hold the definition its plan SHA-256 names")

// DecodePlan decodes the plan record stored for planSHA256. A record whose
// definition does not hash to planSHA256 is refused (ErrPlanMismatch), so
// that a run is never given another plan's definition; a format newer than
// this build knows is refused too, never guessed.
func DecodePlan(value []byte, planSHA256 string) (*Plan, error) {
	var s storedPlan
	if err := json.Unmarshal(value, &s); err != nil {
		return nil, fmt.Errorf("plan record: %w", err)
	}
	if s.FormatVersion > PlanVersion {
		return nil, fmt.Errorf("plan record has format version %d; this weftd reads up to %d", s.FormatVersion, PlanVersion)
	}
	sum := sha256.Sum256(s.Definition)
	if hex.EncodeToString(sum[:]) != planSHA256 {
		return nil, ErrPlanMismatch
	}
	var p Plan
	if err := json.Unmarshal(s.Definition, &p.Definition); err != nil {
		return nil, fmt.Errorf("plan record: %w", err)
	}
	return &p, nil
}
