package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/store"
)

// Definitions is the definition registry (docs/semantics.md#definition-registry):
// a tenant's workflow definitions stored by plan id and version, each
// version written once and never changed, so that a submission
// (SubmitParams.Ref) or a sub-workflow step names a definition instead of
// carrying it.
type Definitions struct{ e *Engine }

// Definitions answers the engine's definition registry.
func (e *Engine) Definitions() *Definitions { return &Definitions{e: e} }

// PutDefinitionParams stores a definition.
type PutDefinitionParams struct {
	TenantID string
	// Definition is validated (after defaults) as a submission's is; its
	// PlanID and PlanVersion say where it is stored.
	Definition definition.Definition
	// CreatedBy is the authenticated principal.
	CreatedBy string
}

// StoredDefinition is one stored version of a plan.
type StoredDefinition struct {
	// Definition is the definition with every default applied.
	Definition definition.Definition
	PlanSHA256 string
	CreatedBy  string
	CreatedAt  time.Time
	// Latest is true for the plan's latest version, the one stored last.
	Latest bool
}

// PutDefinitionResult answers a put.
type PutDefinitionResult struct {
	Stored *StoredDefinition
	// Existing is true when the same definition was already stored under
	// the version, which is answered instead.
	Existing bool
}

// DefinitionRef names a stored definition: a plan and a version, or (an
// empty version) the plan's latest.
type DefinitionRef struct {
	PlanID  string
	Version string
}

// String answers the reference as a message names it: "plan P version V"
// or "plan P (latest)".
func (r DefinitionRef) String() string {
	if r.Version == "" {
		return "plan " + r.PlanID + " (latest)"
	}
	return "plan " + r.PlanID + " version " + r.Version
}

// GetDefinitionParams reads a stored definition.
type GetDefinitionParams struct {
	TenantID string
	Ref      DefinitionRef
}

// ListDefinitionsParams pages through a tenant's stored definitions.
type ListDefinitionsParams struct {
	TenantID string
	// PlanID, when set, lists only that plan's versions.
	PlanID string
	// PageSize bounds the page; 0: DefaultDefinitionsPage.
	PageSize int
	// PageToken is a previous page's NextPageToken.
	PageToken string
}

// DefaultDefinitionsPage is a page's size when ListDefinitionsParams leaves it 0.
const DefaultDefinitionsPage = 100

// DefinitionPage is one page of stored versions, by plan id and then version.
type DefinitionPage struct {
	Definitions []*StoredDefinition
	// NextPageToken is empty on the last page.
	NextPageToken string
}

// putRetries bounds how often a put reads again after losing the race on
// the plan's head to another put of the same plan.
const putRetries = 16

// Put stores a definition under its plan and version, which becomes the
// plan's latest. The same definition (after defaults) again answers the
// stored one, Existing; a different one under a stored version is refused
// with operation_conflict naming the plan and the version.
func (d *Definitions) Put(ctx context.Context, p PutDefinitionParams) (*PutDefinitionResult, error) {
	prepared, _, err := prepareDefinition(p.Definition)
	if err != nil {
		return nil, err
	}
	def := prepared.Definition
	rec := &record.StoredDefinition{FormatVersion: record.Version, TenantID: p.TenantID, Definition: def,
		PlanSHA256: prepared.PlanSHA256, CreatedBy: p.CreatedBy, CreatedAt: clockNow(d.e)}
	headKey := record.DefinitionHeadKey(p.TenantID, def.PlanID)
	unlock := d.e.locks.lockSubmission(headKey) // single-owner stores without CAS check the keys under it
	defer unlock()
	for range putRetries {
		res, err := putOnce(ctx, d.e, rec, headKey)
		var cf *store.ConditionFailedError
		if errors.As(err, &cf) || errors.Is(err, store.ErrOutcomeUnknown) || errors.Is(err, store.ErrRetryable) {
			continue // another put of the plan won, or this one may have landed: read again
		}
		return res, err
	}
	return nil, fault.Unavailable("", "plan "+def.PlanID+" is being stored concurrently; retry")
}

// putOnce reads the version and the plan's head and, when the version is
// new, writes both on condition that neither changed.
func putOnce(ctx context.Context, e *Engine, rec *record.StoredDefinition, headKey []byte) (*PutDefinitionResult, error) {
	def := rec.Definition
	key := record.DefinitionKey(rec.TenantID, def.PlanID, def.PlanVersion)
	head, headVersion, err := readHead(ctx, e, headKey)
	if err != nil {
		return nil, err
	}
	prior, err := readStored(ctx, e, key)
	switch {
	case err == nil:
		if prior.PlanSHA256 != rec.PlanSHA256 {
			return nil, fault.OperationConflict("", "", fmt.Sprintf(
				"plan %s version %s is already stored with a different definition; a stored version never changes: store it under a new version",
				def.PlanID, def.PlanVersion))
		}
		return &PutDefinitionResult{Stored: storedOf(prior, head), Existing: true}, nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	next := &record.DefinitionHead{FormatVersion: record.Version, Latest: def.PlanVersion, Versions: head.Versions + 1}
	headBody, err := json.Marshal(next)
	if err != nil {
		return nil, err
	}
	headCond := store.IfAbsent(headKey)
	if headVersion != 0 {
		headCond = store.IfVersion(headKey, headVersion)
	}
	b := &store.Batch{Conditions: []store.Condition{store.IfAbsent(key), headCond},
		Ops: []store.Op{store.Put(key, body), store.Put(headKey, headBody)}}
	settleRider := store.Ride(ctx, b) // the call's audit record commits with the version
	_, err = commitChecked(ctx, e.store, b)
	settleRider(err)
	if err != nil {
		return nil, err
	}
	return &PutDefinitionResult{Stored: storedOf(rec, next)}, nil
}

// Get answers a stored version, or the plan's latest; not_found names the
// reference when there is none.
func (d *Definitions) Get(ctx context.Context, p GetDefinitionParams) (*StoredDefinition, error) {
	return getDefinition(ctx, d.e, p.TenantID, p.Ref)
}

// getDefinition reads a stored definition by reference: Get, and the
// submissions and sub-workflow steps that name one.
func getDefinition(ctx context.Context, e *Engine, tenant string, ref DefinitionRef) (*StoredDefinition, error) {
	head, _, err := readHead(ctx, e, record.DefinitionHeadKey(tenant, ref.PlanID))
	if err != nil {
		return nil, err
	}
	version := ref.Version
	if version == "" {
		version = head.Latest
	}
	if version == "" {
		return nil, definitionNotFound(ref)
	}
	rec, err := readStored(ctx, e, record.DefinitionKey(tenant, ref.PlanID, version))
	if errors.Is(err, store.ErrNotFound) {
		return nil, definitionNotFound(ref)
	}
	if err != nil {
		return nil, err
	}
	return storedOf(rec, head), nil
}

// definitionNotFound answers a reference the registry holds nothing for.
func definitionNotFound(ref DefinitionRef) error {
	return fault.NotFound("", "", "no definition is stored for "+ref.String())
}

// List answers a page of the tenant's stored versions, by plan id and then
// version.
func (d *Definitions) List(ctx context.Context, p ListDefinitionsParams) (*DefinitionPage, error) {
	size := p.PageSize
	if size <= 0 {
		size = DefaultDefinitionsPage
	}
	params := &store.ScanParams{Prefix: record.DefinitionPrefix(p.TenantID, p.PlanID), Limit: size}
	if p.PageToken != "" {
		plan, version, ok := strings.Cut(p.PageToken, ":")
		if !ok || plan == "" || version == "" || p.PlanID != "" && plan != p.PlanID {
			return nil, fault.Invalid(fault.Violation("page_token", "page_token.format", "page_token is not one a previous page answered"))
		}
		params.After = record.DefinitionKey(p.TenantID, plan, version)
	}
	page, err := d.e.store.Scan(ctx, params)
	if err != nil {
		return nil, err
	}
	out := &DefinitionPage{}
	heads := map[string]*record.DefinitionHead{}
	for _, item := range page.Items {
		rec, err := record.DecodeStoredDefinition(item.Value)
		if err != nil {
			return nil, err
		}
		plan := rec.Definition.PlanID
		if heads[plan] == nil {
			if heads[plan], _, err = readHead(ctx, d.e, record.DefinitionHeadKey(p.TenantID, plan)); err != nil {
				return nil, err
			}
		}
		out.Definitions = append(out.Definitions, storedOf(rec, heads[plan]))
	}
	if len(page.Items) == size && page.Next != nil {
		last := out.Definitions[len(out.Definitions)-1].Definition
		out.NextPageToken = last.PlanID + ":" + last.PlanVersion
	}
	return out, nil
}

// readHead reads a plan's head and its version; an absent head is the zero
// head at version 0.
func readHead(ctx context.Context, e *Engine, key []byte) (*record.DefinitionHead, uint64, error) {
	item, err := e.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return &record.DefinitionHead{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	h, err := record.DecodeDefinitionHead(item.Value)
	return h, item.Version, err
}

// readStored reads a stored version (store.ErrNotFound when absent).
func readStored(ctx context.Context, e *Engine, key []byte) (*record.StoredDefinition, error) {
	item, err := e.store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return record.DecodeStoredDefinition(item.Value)
}

// storedOf answers a stored version as the API shows it, given its plan's head.
func storedOf(rec *record.StoredDefinition, head *record.DefinitionHead) *StoredDefinition {
	return &StoredDefinition{Definition: rec.Definition, PlanSHA256: rec.PlanSHA256, CreatedBy: rec.CreatedBy,
		CreatedAt: rec.CreatedAt, Latest: head.Latest == rec.Definition.PlanVersion}
}
