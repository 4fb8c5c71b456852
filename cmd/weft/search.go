package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// attrFlag gathers --attr NAME[:TYPE]=VALUE flags into search attributes
// (docs/cli.md#search-attributes): TYPE is keyword (the default), int,
// double, bool or time (RFC 3339).
type attrFlag map[string]*weftv1.SearchAttributeValue

func (a attrFlag) String() string { return "" }

// Set reads one --attr.
func (a attrFlag) Set(s string) error {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE or NAME:TYPE=VALUE, e.g. customer=acme or attempts:int=3")
	}
	name, typ, _ := strings.Cut(key, ":")
	if name == "" {
		return fmt.Errorf("the attribute has no name (want NAME=VALUE)")
	}
	if _, dup := a[name]; dup {
		return fmt.Errorf("attribute %s is given twice", name)
	}
	v, err := attrValue(typ, value)
	if err != nil {
		return fmt.Errorf("attribute %s: %w", name, err)
	}
	a[name] = v
	return nil
}

// attrValue reads an --attr value of a type.
func attrValue(typ, s string) (*weftv1.SearchAttributeValue, error) {
	switch typ {
	case "", "keyword":
		return client.AttrKeyword(s), nil
	case "int":
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("an int is a whole number, e.g. 3")
		}
		return client.AttrInt(i), nil
	case "double":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("a double is a number, e.g. 2.5")
		}
		return client.AttrDouble(f), nil
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("a bool is true or false")
		}
		return client.AttrBool(b), nil
	case "time":
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("a time is RFC 3339, e.g. 2026-11-28T10:00:00Z")
		}
		return client.AttrTime(t), nil
	}
	return nil, fmt.Errorf("unknown type %q (want keyword, int, double, bool or time)", typ)
}

// attrText answers a search attribute value as the CLI prints it.
func attrText(v *weftv1.SearchAttributeValue) string {
	switch x := v.GetValue().(type) {
	case *weftv1.SearchAttributeValue_KeywordValue:
		return x.KeywordValue
	case *weftv1.SearchAttributeValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *weftv1.SearchAttributeValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *weftv1.SearchAttributeValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *weftv1.SearchAttributeValue_TimeValue:
		return x.TimeValue.AsTime().UTC().Format(time.RFC3339Nano)
	}
	return "(none)"
}

func (c *cli) count(args []string) error {
	fs := c.flags("count", true)
	query := fs.String("query", "", `only runs matching this query, e.g. 'status = "FAILED" AND customer = "acme"'`)
	groupBy := fs.String("group-by", "", "count per value of status, plan, failedStep or a keyword, bool or int search attribute")
	project := fs.String("project", "", "only runs of this project")
	env := fs.String("env", "", "only runs of this environment")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().CountRuns(ctx, &weftv1.CountRunsRequest{Query: *query, GroupBy: *groupBy, ProjectId: *project, EnvironmentId: *env})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printCount(c.stdout, *groupBy, res)
	return nil
}

// printCount prints a count, and its groups as a table.
func printCount(w io.Writer, groupBy string, res *weftv1.CountRunsResponse) {
	if groupBy == "" {
		fmt.Fprintf(w, "%d\n", res.GetCount())
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tRUNS\n", strings.ToUpper(groupBy))
	for _, g := range res.GetGroups() {
		fmt.Fprintf(tw, "%s\t%d\n", attrText(g.GetValue()), g.GetCount())
	}
	fmt.Fprintf(tw, "total\t%d\n", res.GetCount())
	_ = tw.Flush()
}

// attributesText answers a run's search attributes as name=value, by name.
func attributesText(attrs map[string]*weftv1.SearchAttributeValue) string {
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + "=" + attrText(attrs[name])
	}
	return strings.Join(parts, " ")
}
