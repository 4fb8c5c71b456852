package engine

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// versionOf answers def under plan and version.
func versionOf(def definition.Definition, plan, version string) definition.Definition {
	def.PlanID, def.PlanVersion = plan, version
	return def
}

func (b *bundle) putDefinition(def definition.Definition) *PutDefinitionResult {
	b.t.Helper()
	res, err := b.eng.Definitions().Put(b.ctx, PutDefinitionParams{TenantID: tenant, Definition: def, CreatedBy: "alice"})
	require.NoError(b.t, err)
	return res
}

// codeOf answers the engine error's code, failing the test on another error.
func codeOf(t *testing.T, err error) Code {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	return e.Code
}

func scenarioRegistry_AStoredVersionIsImmutableAndTheSameBodyAgainIsExisting(t *testing.T, b *bundle) {
	first := b.putDefinition(versionOf(seq("a", "b"), "orders", "1"))
	require.False(t, first.Existing)
	require.True(t, first.Stored.Latest)
	require.Equal(t, "alice", first.Stored.CreatedBy)
	require.Equal(t, 3, first.Stored.Definition.Actions[0].Retry.MaxAttempts, "stored with the defaults applied")

	again, err := b.eng.Definitions().Put(b.ctx, PutDefinitionParams{TenantID: tenant, Definition: versionOf(seq("a", "b"), "orders", "1"), CreatedBy: "bob"})
	require.NoError(t, err, "the same definition again is a success")
	require.True(t, again.Existing)
	require.Equal(t, "alice", again.Stored.CreatedBy, "the stored version is answered, not the new put")
	require.Equal(t, first.Stored.PlanSHA256, again.Stored.PlanSHA256)

	_, err = b.eng.Definitions().Put(b.ctx, PutDefinitionParams{TenantID: tenant, Definition: versionOf(seq("a", "c"), "orders", "1")})
	require.Equal(t, CodeOperationConflict, codeOf(t, err))
	require.ErrorContains(t, err, "plan orders version 1 is already stored with a different definition")

	got, err := b.eng.Definitions().Get(b.ctx, GetDefinitionParams{TenantID: tenant, Ref: DefinitionRef{PlanID: "orders", Version: "1"}})
	require.NoError(t, err)
	require.Equal(t, "b", got.Definition.Actions[1].ID, "the refused put changed nothing")
}

func scenarioRegistry_LatestIsTheVersionStoredLast(t *testing.T, b *bundle) {
	b.putDefinition(versionOf(seq("a"), "orders", "2"))
	b.putDefinition(versionOf(seq("a", "b"), "orders", "10"))
	b.putDefinition(versionOf(seq("a"), "orders", "2")) // existing: latest stays 10
	latest, err := b.eng.Definitions().Get(b.ctx, GetDefinitionParams{TenantID: tenant, Ref: DefinitionRef{PlanID: "orders"}})
	require.NoError(t, err)
	require.Equal(t, "10", latest.Definition.PlanVersion)
	require.True(t, latest.Latest)
	older, err := b.eng.Definitions().Get(b.ctx, GetDefinitionParams{TenantID: tenant, Ref: DefinitionRef{PlanID: "orders", Version: "2"}})
	require.NoError(t, err)
	require.False(t, older.Latest)

	for _, ref := range []DefinitionRef{{PlanID: "orders", Version: "3"}, {PlanID: "billing"}} {
		_, err := b.eng.Definitions().Get(b.ctx, GetDefinitionParams{TenantID: tenant, Ref: ref})
		require.Equal(t, CodeNotFound, codeOf(t, err), ref.String())
		require.ErrorContains(t, err, ref.String())
	}
}

func scenarioRegistry_ListPagesByPlanThenVersionWithinTheTenant(t *testing.T, b *bundle) {
	for _, pv := range [][2]string{{"b", "1"}, {"a", "2"}, {"a", "1"}, {"c", "1"}} {
		b.putDefinition(versionOf(seq("x"), pv[0], pv[1]))
	}
	_, err := b.eng.Definitions().Put(b.ctx, PutDefinitionParams{TenantID: "tenant-b", Definition: versionOf(seq("x"), "a", "9")})
	require.NoError(t, err)
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4)
		page, err := b.eng.Definitions().List(b.ctx, ListDefinitionsParams{TenantID: tenant, PageSize: 3, PageToken: token})
		require.NoError(t, err)
		for _, d := range page.Definitions {
			got = append(got, d.Definition.PlanID+"/"+d.Definition.PlanVersion+map[bool]string{true: "*"}[d.Latest])
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	require.Equal(t, []string{"a/1*", "a/2", "b/1*", "c/1*"}, got, "by plan then version, the version stored last marked latest, no other tenant's")
	one, err := b.eng.Definitions().List(b.ctx, ListDefinitionsParams{TenantID: tenant, PlanID: "a"})
	require.NoError(t, err)
	require.Len(t, one.Definitions, 2)
	_, err = b.eng.Definitions().List(b.ctx, ListDefinitionsParams{TenantID: tenant, PageToken: "garbage"})
	require.Equal(t, CodeInvalidArgument, codeOf(t, err))
}

func scenarioRegistry_SubmitByReferenceRunsTheStoredVersionOrTheLatest(t *testing.T, b *bundle) {
	b.putDefinition(versionOf(seq("a"), "orders", "1"))
	b.putDefinition(versionOf(seq("a", "b"), "orders", "2"))
	for _, c := range []struct {
		ref     DefinitionRef
		version string
		steps   int
	}{{DefinitionRef{PlanID: "orders", Version: "1"}, "1", 1}, {DefinitionRef{PlanID: "orders"}, "2", 2}} {
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Ref: &c.ref, Start: true, SubmittedBy: "alice"})
		require.NoError(t, err, c.ref.String())
		require.Equal(t, c.version, res.Run.PlanVersion)
		require.Len(t, res.Run.Steps, c.steps)
		require.Equal(t, runstate.RunRunning, res.Run.Status)
	}
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Ref: &DefinitionRef{PlanID: "orders", Version: "7"}})
	require.Equal(t, CodeNotFound, codeOf(t, err))
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: "tenant-b", Ref: &DefinitionRef{PlanID: "orders"}})
	require.Equal(t, CodeNotFound, codeOf(t, err), "another tenant's registry is not this one's")
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Ref: &DefinitionRef{PlanID: "orders"}, Definition: seq("a")})
	require.Equal(t, CodeInvalidArgument, codeOf(t, err))
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list.Runs, 2, "a refused submission writes nothing")
}

func scenarioRegistry_AnInvalidDefinitionNamesTheFieldAndStoresNothing(t *testing.T, b *bundle) {
	_, err := b.eng.Definitions().Put(b.ctx, PutDefinitionParams{TenantID: tenant, Definition: versionOf(seq("a", "a"), "orders", "1")})
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, CodeInvalidArgument, e.Code)
	require.Equal(t, "definition.actions[1].id", e.Violations[0].Field)
	page, err := b.eng.Definitions().List(b.ctx, ListDefinitionsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Empty(t, page.Definitions)
}

func scenarioRegistry_ConcurrentPutsOfOneVersionStoreExactlyOneBody(t *testing.T, b *bundle) {
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}[:i%2+1] // two bodies
			_, errs[i] = b.eng.Definitions().Put(b.ctx, PutDefinitionParams{TenantID: tenant, Definition: versionOf(seq(ids...), "orders", "1")})
		})
	}
	wg.Wait()
	got, err := b.eng.Definitions().Get(b.ctx, GetDefinitionParams{TenantID: tenant, Ref: DefinitionRef{PlanID: "orders", Version: "1"}})
	require.NoError(t, err)
	winner := len(got.Definition.Actions) - 1
	for i, err := range errs {
		if i%2 == winner {
			require.NoError(t, err, "a put of the stored body succeeds")
		} else {
			require.Equal(t, CodeOperationConflict, codeOf(t, err), "a put of the other body is refused")
		}
	}
}
