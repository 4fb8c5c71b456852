package apitest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// attributeName answers a search attribute name no other test uses.
func attributeName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// testSearch: on every protocol, runs submitted with typed search
// attributes come back with them, ListRuns with a query answers exactly
// the matching ones and CountRuns counts them grouped by an attribute;
// ListSearchAttributes names each attribute's type; a query that does not
// parse and a value of another type than the tenant's are invalid_argument
// naming query and search_attributes.NAME. JSON-RPC reaches CountRuns.
func testSearch(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			ctx := context.Background()
			customer, tries := attributeName("customer"), attributeName("tries")
			keyword := func(s string) *weftv1.SearchAttributeValue {
				return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_KeywordValue{KeywordValue: s}}
			}
			number := func(i int64) *weftv1.SearchAttributeValue {
				return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_IntValue{IntValue: i}}
			}
			submit := func(who string, n int64) string {
				res, err := c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: oneActivity(uniqueName("search.work")),
					SearchAttributes: map[string]*weftv1.SearchAttributeValue{customer: keyword(who), tries: number(n)}}))
				require.NoError(t, err)
				require.Equal(t, who, res.Msg.GetRun().GetSearchAttributes()[customer].GetKeywordValue())
				return res.Msg.GetRun().GetRunId()
			}
			acme1, _, acme3 := submit("acme", 1), submit("globex", 2), submit("acme", 3)

			list, err := c.Runs.ListRuns(ctx, connect.NewRequest(&weftv1.ListRunsRequest{Query: customer + ` = "acme" AND ` + tries + ` >= 1`}))
			require.NoError(t, err)
			var ids []string
			for _, r := range list.Msg.GetRuns() {
				ids = append(ids, r.GetRunId())
				require.Equal(t, "acme", r.GetSearchAttributes()[customer].GetKeywordValue())
			}
			require.ElementsMatch(t, []string{acme1, acme3}, ids)

			count, err := c.Runs.CountRuns(ctx, connect.NewRequest(&weftv1.CountRunsRequest{Query: customer + ` != NULL`, GroupBy: customer}))
			require.NoError(t, err)
			require.Equal(t, uint64(3), count.Msg.GetCount())
			require.Len(t, count.Msg.GetGroups(), 2)
			require.Equal(t, "acme", count.Msg.GetGroups()[0].GetValue().GetKeywordValue())
			require.Equal(t, uint64(2), count.Msg.GetGroups()[0].GetCount())

			attrs, err := c.Runs.ListSearchAttributes(ctx, connect.NewRequest(&weftv1.ListSearchAttributesRequest{}))
			require.NoError(t, err)
			types := map[string]weftv1.SearchAttributeType{}
			for _, a := range attrs.Msg.GetAttributes() {
				types[a.GetName()] = a.GetType()
			}
			require.Equal(t, weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_KEYWORD, types[customer])
			require.Equal(t, weftv1.SearchAttributeType_SEARCH_ATTRIBUTE_TYPE_INT, types[tries])

			_, err = c.Runs.ListRuns(ctx, connect.NewRequest(&weftv1.ListRunsRequest{Query: customer + ` = `}))
			RequireInvalidField(t, err, "query", "query.syntax")
			_, err = c.Runs.CountRuns(ctx, connect.NewRequest(&weftv1.CountRunsRequest{Query: `nosuch = 1`}))
			RequireInvalidField(t, err, "query", "query.syntax")
			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: oneActivity(uniqueName("search.work")),
				SearchAttributes: map[string]*weftv1.SearchAttributeValue{tries: keyword("three")}}))
			RequireInvalidField(t, err, "search_attributes."+tries, "search_attributes.type")
			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: oneActivity(uniqueName("search.work")),
				SearchAttributes: map[string]*weftv1.SearchAttributeValue{"bad": {}}}))
			RequireInvalidField(t, err, "search_attributes.bad", "search_attributes.value")
		})
	}
	t.Run("jsonrpc", func(t *testing.T) {
		res := CallJSONRPC(t, baseURL, 1, "weft.v1.RunService/CountRuns", map[string]any{"query": `status = "PENDING"`}, nil)
		require.Nil(t, res.Error)
		require.Contains(t, string(res.Result), `"count"`)
	})
}
