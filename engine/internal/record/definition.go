package record

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
)

// StoredDefinition is one version of a plan in the definition registry
// (def:{tenant}:{plan}:{version}), written once and never changed
// (docs/semantics.md#definition-registry).
type StoredDefinition struct {
	FormatVersion int    `json:"version"`
	TenantID      string `json:"tenant_id"`
	// Definition is the definition with every default applied; its PlanID
	// and PlanVersion are the key's.
	Definition definition.Definition `json:"definition"`
	// PlanSHA256 is the SHA-256 of the definition's canonical JSON: two
	// puts of one version are the same definition when it is equal.
	PlanSHA256 string    `json:"plan_sha256"`
	CreatedBy  string    `json:"created_by,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// DefinitionHead is a plan's place in the registry (defh:{tenant}:{plan}):
// its latest version, the one stored last, and how many versions it has.
// It changes by compare-and-set on its version, with each new version.
type DefinitionHead struct {
	FormatVersion int    `json:"version"`
	Latest        string `json:"latest"`
	Versions      uint64 `json:"versions"`
}

// DefinitionKey is where a plan's version is stored.
func DefinitionKey(tenant, planID, version string) []byte {
	return keyspace.Definition.Key(tenant, planID, version)
}

// DefinitionPrefix begins every stored version of the tenant's, or of one
// of its plans when planID is not empty.
func DefinitionPrefix(tenant, planID string) []byte {
	if planID == "" {
		return keyspace.Definition.KeyPrefix(tenant)
	}
	return keyspace.Definition.KeyPrefix(tenant, planID)
}

// DefinitionHeadKey is where a plan's head is stored.
func DefinitionHeadKey(tenant, planID string) []byte {
	return keyspace.DefinitionHead.Key(tenant, planID)
}

// DecodeStoredDefinition reads a stored version; a format newer than this
// build knows is an error, never a guess.
func DecodeStoredDefinition(value []byte) (*StoredDefinition, error) {
	var d StoredDefinition
	if err := json.Unmarshal(value, &d); err != nil {
		return nil, fmt.Errorf("stored definition: %w", err)
	}
	if d.FormatVersion > Version {
		return nil, fmt.Errorf("stored definition has format version %d; this weftd reads up to %d", d.FormatVersion, Version)
	}
	return &d, nil
}

// DecodeDefinitionHead reads a plan's head.
func DecodeDefinitionHead(value []byte) (*DefinitionHead, error) {
	var h DefinitionHead
	if err := json.Unmarshal(value, &h); err != nil {
		return nil, fmt.Errorf("definition head: %w", err)
	}
	if h.FormatVersion > Version {
		return nil, fmt.Errorf("definition head has format version %d; this weftd reads up to %d", h.FormatVersion, Version)
	}
	return &h, nil
}
