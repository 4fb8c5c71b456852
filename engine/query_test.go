package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// attr builds a search attribute to submit.
func attr(name, typ, raw string) runstate.SearchAttribute {
	return runstate.SearchAttribute{Name: name, Type: typ, Value: json.RawMessage(raw)}
}

// queryFixtureRuns submits n runs of three plans with varied search
// attributes (some unset), one minute apart, each driven to a status by
// its index: PENDING, RUNNING, COMPLETED, FAILED at charge, CANCELLED.
func queryFixtureRuns(b *bundle, n int) []string {
	b.t.Helper()
	customers := []string{"acme", "acme-east", "globex", "ac:me", "a%b", "Acme", "", "acme"}
	plans := []string{"order-fulfilment", "refund", "order"}
	var ids []string
	for i := range n {
		b.clock.Advance(time.Minute)
		def := definition.Definition{PlanID: plans[i%len(plans)], PlanVersion: strconv.Itoa(1 + i%2), Actions: []definition.Action{
			{ID: "charge", Order: 1, Activity: fmt.Sprintf("charge-%d", i)},
			{ID: "ship", Order: 2, Activity: fmt.Sprintf("ship-%d", i)},
		}}
		var attrs []runstate.SearchAttribute
		if c := customers[i%len(customers)]; c != "" {
			attrs = append(attrs, attr("customer", "keyword", strconv.Quote(c)))
		}
		if i%3 != 0 {
			attrs = append(attrs, attr("attempts", "int", strconv.Itoa(i%7-3)))
		}
		if i%4 != 1 {
			attrs = append(attrs, attr("score", "double", strconv.FormatFloat(float64(i%9)*0.75-2, 'g', -1, 64)))
		}
		if i%5 != 2 {
			attrs = append(attrs, attr("vip", "bool", strconv.FormatBool(i%2 == 0)))
		}
		if i%6 != 3 {
			due := testStart.Add(time.Duration(i%10) * time.Hour)
			attrs = append(attrs, attr("due", "time", strconv.Quote(due.Format(time.RFC3339))))
		}
		stage := i % 5
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: stage != 0,
			SubmittedBy: []string{"alice", "bob"}[i%2], SearchAttributes: attrs})
		require.NoError(b.t, err)
		id := res.Run.RunID
		ids = append(ids, id)
		switch stage {
		case 2: // COMPLETED
			b.complete(b.poll(def.Actions[0].Activity), `{}`)
			b.complete(b.poll(def.Actions[1].Activity), `{}`)
		case 3: // FAILED at charge
			b.fail(b.poll(def.Actions[0].Activity), definition.ErrorValidation)
		case 4: // CANCELLED
			_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: id, Reason: "test"})
			require.NoError(b.t, err)
		}
	}
	return ids
}

// bruteForce answers, newest first, the runs among ids that q matches,
// reading each run's snapshot: the filter every query's answer must equal.
func bruteForce(b *bundle, q *runquery.Query, ids []string) []string {
	b.t.Helper()
	var out []string
	for i := len(ids) - 1; i >= 0; i-- {
		s := b.run(ids[i])
		v := runquery.Values{
			runquery.FieldStatus: runquery.KeywordValue(string(s.Status)), runquery.FieldPlan: runquery.KeywordValue(s.PlanID),
			runquery.FieldPlanVersion: runquery.KeywordValue(s.PlanVersion), runquery.FieldRunID: runquery.KeywordValue(s.RunID),
			runquery.FieldSubmittedBy: runquery.KeywordValue(s.SubmittedBy), runquery.FieldCreatedAt: runquery.TimeValue(s.CreatedAt),
		}
		if !s.StartedAt.IsZero() {
			v[runquery.FieldStartedAt] = runquery.TimeValue(s.StartedAt)
		}
		if !s.CompletedAt.IsZero() {
			v[runquery.FieldEndedAt] = runquery.TimeValue(s.CompletedAt)
		}
		if s.Error != nil && s.Error.ActionID != "" {
			v[runquery.FieldFailedStep] = runquery.KeywordValue(s.Error.ActionID)
		}
		for _, a := range s.SearchAttributes {
			t, err := runquery.ParseType(a.Type)
			require.NoError(b.t, err)
			val, err := runquery.AttributeValue(t, a.Value)
			require.NoError(b.t, err)
			v[a.Name] = val
		}
		if q.Match(v) {
			out = append(out, s.RunID)
		}
	}
	return out
}

// listQuery pages through ListRuns with a query, pageSize at a time.
func listQuery(b *bundle, query string, pageSize int) []string {
	b.t.Helper()
	var out []string
	token := ""
	for range 1000 {
		res, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, Query: query, PageSize: pageSize, PageToken: token})
		require.NoError(b.t, err, query)
		for _, r := range res.Runs {
			out = append(out, r.RunID)
		}
		if token = res.NextPageToken; token == "" {
			return out
		}
	}
	b.t.Fatalf("query %s: pages never ended", query)
	return nil
}

// operatorQueries exercise every operator on every type of field, the
// built-in fields, and AND, OR, NOT and parentheses.
func operatorQueries(ids []string) []string {
	return []string{
		`customer = "acme"`, `customer != "acme"`, `customer < "acme"`, `customer <= "acme-east"`, `customer > "ac:me"`,
		`customer >= "acme"`, `customer IN ("acme", "globex", "nobody")`, `customer NOT IN ("acme")`, `customer STARTS_WITH "ac"`,
		`customer STARTS_WITH "a%"`, `customer = NULL`, `customer != NULL`,
		`attempts = 1`, `attempts != 1`, `attempts < 0`, `attempts <= -1`, `attempts > 1.5`, `attempts >= 2`, `attempts IN (-3, 0, 3)`,
		`attempts NOT IN (0)`, `attempts = NULL`,
		`score = -0.5`, `score != 1`, `score < 0`, `score <= 1`, `score > 2.5`, `score >= -2`, `score IN (-2, 4)`, `score > 1 AND score < 3`,
		`vip = TRUE`, `vip != TRUE`, `vip = FALSE`, `vip = NULL`,
		`due = "2026-11-01T15:00:00Z"`, `due < "2026-11-01T14:00:00Z"`, `due >= "2026-11-01T18:00:00Z"`, `due > "2026-11-01T13:30:00Z" AND due <= "2026-11-01T16:00:00Z"`,
		`status = "FAILED"`, `status IN ("COMPLETED", "CANCELLED")`, `status != "RUNNING"`, `status NOT IN ("PENDING", "RUNNING")`,
		`plan = "order-fulfilment"`, `plan STARTS_WITH "order"`, `plan > "order"`, `planVersion = "2"`,
		`runId = "` + ids[3] + `"`, `runId IN ("` + ids[0] + `", "` + ids[7] + `", "no-such-run")`, `runId STARTS_WITH "0"`,
		`submittedBy = "bob"`, `failedStep = "charge"`, `failedStep = NULL`, `parentRunId = NULL`,
		`createdAt > "2026-11-01T12:10:00Z"`, `createdAt <= "2026-11-01T12:05:00Z"`, `createdAt >= "2026-11-01T12:03:00Z" AND createdAt < "2026-11-01T12:09:00Z"`,
		`startedAt > "2026-11-01T12:20:00Z"`, `endedAt = NULL`, `endedAt < "2026-11-01T12:30:00Z"`,
		`status = "FAILED" AND plan = "order-fulfilment" AND failedStep = "charge" AND createdAt > "2026-11-01T12:00:00Z"`,
		`customer = "acme" OR customer = "globex"`, `customer = "acme" OR vip = TRUE`, `NOT customer = "acme"`,
		`NOT (status = "COMPLETED" OR attempts > 0)`, `(plan = "refund" OR plan = "order") AND NOT vip = FALSE`,
		`attempts > 5 AND attempts < 2`, `customer = "acme" AND customer = "globex"`,
	}
}

// TestQuery_EveryOperatorMatchesABruteForceFilterOnEveryStore: ListRuns
// with a query answers, page after page, exactly the runs a filter over
// every run's snapshot answers, newest first, on memory, Pebble and
// PostgreSQL — whatever index scan the plan chose.
func TestQuery_EveryOperatorMatchesABruteForceFilterOnEveryStore(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			ids := queryFixtureRuns(b, 40)
			types, err := tenantAttributeTypes(b.ctx, b.store, tenant)
			require.NoError(t, err)
			schema, err := runquery.NewSchema(types)
			require.NoError(t, err)
			for _, src := range operatorQueries(ids) {
				q, err := runquery.Compile(src, schema)
				require.NoError(t, err, src)
				want := bruteForce(b, q, ids)
				require.Equal(t, want, listQuery(b, src, 7), src)
				require.Equal(t, want, listQuery(b, src, 1000), src)
				count, err := b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant, Query: src})
				require.NoError(t, err, src)
				require.Equal(t, int64(len(want)), count.Count, src)
			}
		})
	}
}

// recordCounter counts the records a store answers while counting is on:
// one a Get, and one each item of a Scan.
type recordCounter struct {
	store.Store
	counting atomic.Bool
	records  atomic.Int64
}

func (s *recordCounter) Get(ctx context.Context, key []byte) (store.Item, error) {
	it, err := s.Store.Get(ctx, key)
	if s.counting.Load() && err == nil {
		s.records.Add(1)
	}
	return it, err
}

func (s *recordCounter) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	res, err := s.Store.Scan(ctx, p)
	if s.counting.Load() && err == nil {
		s.records.Add(int64(len(res.Items)))
	}
	return res, err
}

// read answers how many records f read.
func (s *recordCounter) read(f func()) int64 {
	s.records.Store(0)
	s.counting.Store(true)
	defer s.counting.Store(false)
	f()
	return s.records.Load()
}

// fillRuns stores n PENDING runs of a plan directly, in large batches —
// what n submissions write for the query path to read: each run's record,
// checkpoint, rs: and sx: entries, as the engine writes
// them (indexEntries) — cloned from one run submitted
// through the engine. of gives run i's plan and customer.
func fillRuns(tb testing.TB, ctx context.Context, eng *Engine, st store.Store, n int, of func(i int) (plan, customer string)) {
	tb.Helper()
	fillRunsOfStatus(tb, ctx, eng, st, n, of, nil)
}

// fillRunsOfStatus is fillRuns with run i of status(i) (nil: PENDING).
func fillRunsOfStatus(tb testing.TB, ctx context.Context, eng *Engine, st store.Store, n int, of func(i int) (plan, customer string),
	status func(i int) runstate.RunStatus) {
	tb.Helper()
	res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: seq("charge"), SubmittedBy: "alice",
		SearchAttributes: []runstate.SearchAttribute{attr("customer", "keyword", `"template"`)}})
	require.NoError(tb, err)
	template, err := eng.records.LoadRun(ctx, res.Run.RunID)
	require.NoError(tb, err)
	templateState, _, err := eng.records.LoadCheckpoint(ctx, res.Run.RunID)
	require.NoError(tb, err)
	batch := &store.Batch{}
	for i := range n {
		plan, customer := of(i)
		rec := *template
		rec.RunID, rec.CreatedAt = newRunID(), testStart.Add(time.Duration(i)*time.Millisecond)
		rec.Definition.PlanID = plan
		state := templateState.Clone()
		state.RunID, state.CreatedAt = rec.RunID, rec.CreatedAt
		state.SearchAttributes = []runstate.SearchAttribute{attr("customer", "keyword", strconv.Quote(customer))}
		if status != nil {
			state.Status = status(i)
		}
		body, err := json.Marshal(&rec)
		require.NoError(tb, err)
		batch.Ops = append(batch.Ops, store.Put(record.RunKey(rec.RunID), body),
			store.Put(runlog.CheckpointKey(rec.RunID), runcodec.AppendState(nil, state)))
		for k, v := range indexEntries(&rec, indexedOf(state)) {
			batch.Ops = append(batch.Ops, store.Put([]byte(k), []byte(v)))
		}
		if len(batch.Ops) > 20_000 || i == n-1 {
			_, err := st.Commit(ctx, batch)
			require.NoError(tb, err)
			batch = &store.Batch{}
		}
	}
}

// TestQuery_ASelectiveQueryReadsItsMatchesNotEveryRun: among 100 000
// stored runs, a query matching 50 — on a search attribute, and on a
// status among a plan's runs — reads O(50) records (each match's index
// entry, record and checkpoint), where the same answer by a scan of every
// run reads over 100 000.
func TestQuery_ASelectiveQueryReadsItsMatchesNotEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100 000 runs")
	}
	const stored, matching = 100_000, 50
	// Pebble: the memory store keeps its keys in one sorted slice, which
	// 100 000 runs' keys make slow to fill.
	pebble, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pebble.Close() })
	counter := &recordCounter{Store: pebble}
	b := setupWith(t, counter)
	b.noProjectionCheck = true // 100 000 runs' logs
	fillRuns(t, b.ctx, b.eng, counter.Store, stored, func(i int) (string, string) {
		if i%(stored/matching) == 0 {
			return "rare", "acme"
		}
		return "bulk", "customer-" + strconv.Itoa(i%1000+1000)
	})
	for _, query := range []string{`customer = "acme"`, `plan = "rare" AND status = "PENDING"`} {
		var runs []string
		reads := counter.read(func() { runs = listQuery(b, query, 1000) })
		require.Len(t, runs, matching, query)
		t.Logf("%s: %d records read for %d matches among %d stored runs", query, reads, matching, stored)
		require.LessOrEqual(t, reads, int64(4*matching+MaxTenantAttributes), "%s read %d records", query, reads)
	}
	full := counter.read(func() {
		require.Len(t, listQuery(b, `customer STARTS_WITH "acm" OR submittedBy = "nobody"`, 1000), matching)
	})
	require.Greater(t, full, int64(stored), "a query no index serves reads every run (and the template)")
}

// TestQuery_ABadQueryIsInvalidArgumentNamingTheColumnAndTheProblem: a
// query that does not parse or type-check is refused invalid_argument,
// its violation on the field query, naming the column; nothing is read.
func TestQuery_ABadQueryIsInvalidArgumentNamingTheColumnAndTheProblem(t *testing.T) {
	b := setup(t)
	queryFixtureRuns(b, 3)
	for query, want := range map[string]string{
		`customer = `:             "expected a value after '=' at column 12, found the end",
		`status = "SLEEPING"`:     "column 10",
		`nosuch = 1`:              "nosuch",
		`attempts = "three"`:      "column 12",
		`vip STARTS_WITH "t"`:     "column",
		`(customer = "acme"`:      "column 19",
		`customer = "a" AND AND`:  "column 20",
		`due > "yesterday"`:       "RFC 3339",
		`customer = "a" ORDER BY`: "column 16",
	} {
		_, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, Query: query})
		require.Equal(t, CodeInvalidArgument, CodeOf(err), query)
		require.Contains(t, err.Error(), want, query)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "query", e.Violations[0].Field, query)
		_, err = b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant, Query: query})
		require.Equal(t, CodeInvalidArgument, CodeOf(err), query)
	}
	_, err := b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant, GroupBy: "score"})
	require.Equal(t, CodeInvalidArgument, CodeOf(err))
	require.Contains(t, err.Error(), "not by score")
}

// TestSearchAttributes_BadAttributesAreRefusedNamingTheFieldAndNothingIsWritten:
// each broken rule of a submission's attributes is invalid_argument naming
// the attribute and the rule, and the run is not created.
func TestSearchAttributes_BadAttributesAreRefusedNamingTheFieldAndNothingIsWritten(t *testing.T) {
	b := setup(t)
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"),
		SearchAttributes: []runstate.SearchAttribute{attr("customer", "keyword", `"acme"`)}})
	require.NoError(t, err)
	many := make([]runstate.SearchAttribute, MaxRunAttributes+1)
	for i := range many {
		many[i] = attr(fmt.Sprintf("a%03d", i), "int", "1")
	}
	for _, c := range []struct {
		name  string
		attrs []runstate.SearchAttribute
		field string
		rule  string
	}{
		{"type fixed by the first value", []runstate.SearchAttribute{attr("customer", "int", "4")}, "search_attributes.customer", "search_attributes.type"},
		{"value not of its type", []runstate.SearchAttribute{attr("n", "int", `"4"`)}, "search_attributes.n", "search_attributes.value"},
		{"a double that is not an int", []runstate.SearchAttribute{attr("n", "int", "1.5")}, "search_attributes.n", "search_attributes.value"},
		{"keyword too long", []runstate.SearchAttribute{attr("k", "keyword", strconv.Quote(string(make([]byte, 257))))}, "search_attributes.k", "search_attributes.value"},
		{"unknown type", []runstate.SearchAttribute{attr("k", "string", `"x"`)}, "search_attributes.k", "search_attributes.type"},
		{"bad name", []runstate.SearchAttribute{attr("1st", "int", "1")}, "search_attributes.1st", "search_attributes.name"},
		{"a built-in field", []runstate.SearchAttribute{attr("status", "keyword", `"x"`)}, "search_attributes.status", "search_attributes.name"},
		{"a word of the language", []runstate.SearchAttribute{attr("and", "bool", "true")}, "search_attributes.and", "search_attributes.name"},
		{"a time out of range", []runstate.SearchAttribute{attr("t", "time", `"3000-01-01T00:00:00Z"`)}, "search_attributes.t", "search_attributes.value"},
		{"twice", []runstate.SearchAttribute{attr("x", "int", "1"), attr("x", "int", "2")}, "search_attributes.x", "search_attributes.unique"},
		{"too many on a run", many, "search_attributes", "search_attributes.count"},
		{"too many names in the tenant", many[:MaxRunAttributes], "search_attributes", "search_attributes.tenant_count"},
	} {
		_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), SearchAttributes: c.attrs})
		require.Equal(t, CodeInvalidArgument, CodeOf(err), c.name)
		var e *Error
		require.ErrorAs(t, err, &e, c.name)
		require.Equal(t, c.field, e.Violations[0].Field, c.name)
		require.Equal(t, c.rule, e.Violations[0].Rule, c.name)
		require.NotContains(t, err.Error(), "\x00\x00", c.name) // never the value
	}
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list.Runs, 1, "no refused submission created a run")
	attrs, err := b.eng.Queries().SearchAttributes(b.ctx, tenant)
	require.NoError(t, err)
	require.Equal(t, []SearchAttribute{{Name: "customer", Type: runquery.Keyword}}, attrs, "no refused name got a type")
}

// TestSearchAttributes_ADeletedRunLeavesNoIndexEntries: deleting a run
// removes its sx: entries with it; its tenant's types stay.
func TestSearchAttributes_ADeletedRunLeavesNoIndexEntries(t *testing.T) {
	b := setup(t)
	ids := queryFixtureRuns(b, 5)
	ended := ids[2] // COMPLETED
	countEntries := func() int {
		res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: []byte("sx:")})
		require.NoError(t, err)
		n := 0
		for _, it := range res.Items {
			if strings.HasSuffix(string(it.Key), ":"+ended) {
				n++
			}
		}
		return n
	}
	require.GreaterOrEqual(t, countEntries(), 7, "plan, submitter, end and its attributes (no start: it started as it was created)")
	_, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: ended})
	require.NoError(t, err)
	require.Zero(t, countEntries())
	require.Empty(t, listQuery(b, `customer = "acme"`+` AND runId = "`+ended+`"`, 10))
	attrs, err := b.eng.Queries().SearchAttributes(b.ctx, tenant)
	require.NoError(t, err)
	require.Len(t, attrs, 5)
}

// TestSearchAttributes_AWorkersCompletionSetsThemInItsCommit: a worker's
// result sets attributes on the run (over the submission's, keeping the
// others), recorded by an event keyed to the step's attempt and queryable
// at once; a result whose attributes break a rule is refused and leaves the
// task claimed, so a corrected report still completes it.
func TestSearchAttributes_AWorkersCompletionSetsThemInItsCommit(t *testing.T) {
	b := setup(t)
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("charge", "ship"), Start: true,
		SearchAttributes: []runstate.SearchAttribute{attr("customer", "keyword", `"acme"`), attr("stage", "keyword", `"new"`)}})
	require.NoError(t, err)
	runID := res.Run.RunID
	task := b.poll("act-charge")
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		SearchAttributes: []runstate.SearchAttribute{attr("stage", "int", "2")}})
	require.Equal(t, CodeInvalidArgument, CodeOf(err), "stage is a keyword in this tenant")
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		SearchAttributes: []runstate.SearchAttribute{attr("stage", "keyword", `"charged"`), attr("amount", "double", "12.5")}})
	require.NoError(t, err)
	snap := b.run(runID)
	require.Equal(t, []runstate.SearchAttribute{attr("amount", "double", "12.5"), attr("customer", "keyword", `"acme"`),
		attr("stage", "keyword", `"charged"`)}, snap.SearchAttributes)
	ev := b.eventAt(runID, runstate.EvSearchAttributesUpserted, "charge")
	require.Equal(t, 1, ev.LogicalAttempt)
	require.Equal(t, []string{runID}, listQuery(b, `stage = "charged" AND amount > 10`, 10))
	require.Empty(t, listQuery(b, `stage = "new"`, 10), "the old value's index entry went with the change")
}

// TestSearchAttributes_ADefinitionsExpressionsSetThemAtSubmission: a
// definition's searchAttributes are evaluated over the input when the run
// is submitted, each typed by its value (a literal is a keyword); the
// submission's attribute of the same name wins. A mistake is refused
// naming definition.search_attributes.NAME: at validation (syntax, an
// undeclared name), at submission (a value of no attribute type, a type
// the tenant fixed otherwise), and nothing is written.
func TestSearchAttributes_ADefinitionsExpressionsSetThemAtSubmission(t *testing.T) {
	b := setup(t)
	def := seq("a")
	def.SearchAttributes = map[string]string{"customer": "${{ input.customer }}", "priority": "${{ input.items.size() + 1 }}",
		"ratio": "${{ 0.5 }}", "rush": "${{ input.items.size() > 1 }}", "due": `${{ timestamp("2026-11-28T10:00:00Z") }}`,
		"channel": "web", "escaped": "$${{ not an expression }}"}
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Input: json.RawMessage(`{"customer": "acme", "items": [1, 2]}`),
		SearchAttributes: []runstate.SearchAttribute{attr("channel", "keyword", `"api"`)}})
	require.NoError(t, err)
	require.Equal(t, []runstate.SearchAttribute{
		attr("channel", "keyword", `"api"`), attr("customer", "keyword", `"acme"`), attr("due", "time", `"2026-11-28T10:00:00Z"`),
		attr("escaped", "keyword", `"${{ not an expression }}"`), attr("priority", "int", "3"), attr("ratio", "double", "0.5"),
		attr("rush", "bool", "true"),
	}, b.run(res.Run.RunID).SearchAttributes)
	require.Equal(t, []string{res.Run.RunID}, listQuery(b, `priority = 3 AND rush = TRUE AND due < "2026-12-01T00:00:00Z"`, 10))

	for name, c := range map[string]struct{ value, field string }{
		"syntax":     {"${{ input. }}", "definition.search_attributes.bad"},
		"undeclared": {"${{ inptu.customer }}", "definition.search_attributes.bad"},
		"a map":      {`${{ {"a": 1} }}`, "definition.search_attributes.bad"},
		"a list":     {"${{ input.items }}", "definition.search_attributes.bad"},
		"no key":     {"${{ input.nothing }}", "definition.search_attributes.bad"},
		"type fixed": {"${{ 7 }}", "definition.search_attributes.customer"},
		"bad name":   {"x", "definition.search_attributes.1bad"},
	} {
		d := seq("a")
		key := "bad"
		switch name {
		case "type fixed":
			key = "customer"
		case "bad name":
			key = "1bad"
		}
		d.SearchAttributes = map[string]string{key: c.value}
		_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Input: json.RawMessage(`{"customer": "acme", "items": [1]}`)})
		require.Equal(t, CodeInvalidArgument, CodeOf(err), "%s: %v", name, err)
		var e *Error
		require.ErrorAs(t, err, &e, name)
		require.Equal(t, c.field, e.Violations[0].Field, "%s: %v", name, err)
	}
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list.Runs, 1, "no refused submission created a run")
}

// TestSearchAttributes_YAMLSearchAttributesLoadAndMistakesNameTheirYAMLPath:
// searchAttributes: in YAML, a number or a bool keeping its type.
func TestSearchAttributes_YAMLSearchAttributesLoadAndMistakesNameTheirYAMLPath(t *testing.T) {
	d, err := definition.LoadYAML([]byte("planId: p\nsearchAttributes:\n  customer: ${{ input.customer }}\n  priority: 2\n  rush: true\n  channel: web\nsteps:\n  - name: a\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"customer": "${{ input.customer }}", "priority": "${{ 2 }}", "rush": "${{ true }}", "channel": "web"},
		d.SearchAttributes)
	_, paths, err := definition.ReadYAML([]byte("planId: p\nspec:\n  searchAttributes:\n    customer: ${{ input. }}\n  steps:\n    - name: a\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "spec.searchAttributes.customer")
	_ = paths
	_, err = definition.LoadYAML([]byte("planId: p\nsearchAttributes: [a]\nsteps:\n  - name: a\n"))
	require.ErrorContains(t, err, "searchAttributes")
}

// TestQuery_ParentRunIdFindsTheChildrenASubWorkflowStepStarted: a child
// run is indexed under its parent from its submission.
func TestQuery_ParentRunIdFindsTheChildrenASubWorkflowStepStarted(t *testing.T) {
	b := setup(t)
	run := b.submit(withChild(inlineChild(), `{"n":1}`))
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	child := b.childOf(run.RunID, "child")
	require.Equal(t, []string{child.RunID}, listQuery(b, `parentRunId = "`+run.RunID+`"`, 10))
	require.Equal(t, []string{run.RunID}, listQuery(b, `parentRunId = NULL`, 10))
	count, err := b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant, Query: `parentRunId STARTS_WITH "` + run.RunID[:4] + `"`})
	require.NoError(t, err)
	require.Equal(t, int64(1), count.Count)
}

// TestQuery_StartedAtFindsARunStartedAsItWasCreatedWithoutAnEntry: a run
// that starts as it is created writes no sx: startedAt entry, one started
// later does, and a startedAt query finds both by their start, never by
// the other's creation time.
func TestQuery_StartedAtFindsARunStartedAsItWasCreatedWithoutAnEntry(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			def := definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{{ID: "a", Order: 1, Activity: "act"}}}
			b.clock.Advance(time.Minute)
			atOnce, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true})
			require.NoError(t, err)
			b.clock.Advance(time.Minute)
			later, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def})
			require.NoError(t, err)
			laterCreated := b.clock.Now()
			b.clock.Advance(time.Minute)
			_, err = b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: later.Run.RunID})
			require.NoError(t, err)
			laterStarted := b.clock.Now()

			res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: []byte("sx:" + tenant + ":startedAt:")})
			require.NoError(t, err)
			require.Len(t, res.Items, 1, "only the run started after its creation has an entry")
			require.True(t, strings.HasSuffix(string(res.Items[0].Key), ":"+later.Run.RunID))

			at := func(t time.Time) string { return `"` + t.UTC().Format(time.RFC3339Nano) + `"` }
			created := atOnce.Run.CreatedAt
			require.Equal(t, []string{atOnce.Run.RunID}, listQuery(b, `startedAt = `+at(created), 10))
			require.Equal(t, []string{later.Run.RunID}, listQuery(b, `startedAt = `+at(laterStarted), 10))
			require.Empty(t, listQuery(b, `startedAt = `+at(laterCreated), 10), "created then, started a minute later")
			require.Equal(t, []string{later.Run.RunID, atOnce.Run.RunID}, listQuery(b, `startedAt >= `+at(created), 1))
			require.Equal(t, []string{atOnce.Run.RunID}, listQuery(b, `startedAt < `+at(laterStarted), 10))
		})
	}
}
