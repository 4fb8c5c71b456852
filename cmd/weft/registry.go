package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// definitionCommands are weft definition's subcommands, in the order usage
// lists them: the definition registry (docs/definitions.md#the-registry).
var definitionCommands []command

func init() {
	definitionCommands = []command{
		{"put", "FILE", "store a workflow (YAML or JSON) under its plan id and version", (*cli).definitionPut},
		{"get", "PLAN", "show a stored definition: --version V, or the plan's latest", (*cli).definitionGet},
		{"list", "", "list stored definitions by plan and version (--plan)", (*cli).definitionList},
	}
}

// definition dispatches weft definition SUBCOMMAND.
func (c *cli) definition(args []string) error {
	return c.dispatch("definition", definitionCommands, args)
}

func (c *cli) definitionPut(args []string) error {
	pos, err := c.parse(c.flags("definition put", true), args, "FILE")
	if err != nil {
		return err
	}
	def, paths, err := loadDefinition(pos[0])
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().PutDefinition(ctx, def)
	if err != nil {
		return inYAML(err, paths)
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	v := res.GetVersion()
	if res.GetExisting() {
		fmt.Fprintf(c.stdout, "plan %s version %s was already stored with this definition\n", v.GetPlanId(), v.GetPlanVersion())
	} else {
		fmt.Fprintf(c.stdout, "stored plan %s version %s (latest)\n", v.GetPlanId(), v.GetPlanVersion())
	}
	printVersions(c.stdout, []*weftv1.DefinitionVersion{v})
	return nil
}

func (c *cli) definitionGet(args []string) error {
	fs := c.flags("definition get", true)
	version := fs.String("version", "", "the version (default the plan's latest, the version stored last)")
	pos, err := c.parse(fs, args, "PLAN")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().GetDefinition(ctx, pos[0], *version)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printVersions(c.stdout, []*weftv1.DefinitionVersion{res.GetVersion()})
	fmt.Fprintln(c.stdout)
	printActions(c.stdout, res.GetDefinition())
	return nil
}

func (c *cli) definitionList(args []string) error {
	fs := c.flags("definition list", true)
	plan := fs.String("plan", "", "only this plan's versions")
	pageSize := fs.Uint("page-size", 0, "at most this many (default 100)")
	pageToken := fs.String("page-token", "", "the next page, from a previous list")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().ListDefinitions(ctx, &weftv1.ListDefinitionsRequest{PlanId: *plan,
		PageSize: uint32(*pageSize), PageToken: *pageToken})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	if len(res.GetVersions()) == 0 {
		fmt.Fprintln(c.stdout, "no definitions stored")
		return nil
	}
	printVersions(c.stdout, res.GetVersions())
	if t := res.GetNextPageToken(); t != "" {
		fmt.Fprintf(c.stdout, "\nmore: weft definition list --page-token %s\n", t)
	}
	return nil
}

// printVersions prints stored versions as a table.
func printVersions(w io.Writer, versions []*weftv1.DefinitionVersion) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tVERSION\tLATEST\tACTIONS\tSTORED\tBY\tSHA-256")
	for _, v := range versions {
		latest := ""
		if v.GetLatest() {
			latest = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", v.GetPlanId(), v.GetPlanVersion(), latest, v.GetActionCount(),
			when(v.GetCreatedAt()), principalText(v.GetCreatedBy()), short(v.GetPlanSha256()))
	}
	_ = tw.Flush()
}

// printActions prints a definition's actions: id, what runs it, what it
// depends on.
func printActions(w io.Writer, def *weftv1.WorkflowDefinition) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tORDER\tRUNS\tDEPENDS ON")
	for _, a := range def.GetActions() {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", a.GetId(), a.GetOrder(), actionRuns(a), dependsText(a.GetDependsOn()))
	}
	_ = tw.Flush()
}

// actionRuns says what an action runs: its activity, the signal it waits
// for, or a person.
func actionRuns(a *weftv1.Action) string {
	switch {
	case a.GetWaitForSignal() != nil:
		return "signal " + a.GetWaitForSignal().GetSignalName()
	case a.GetActivity() != "":
		return a.GetActivity()
	default:
		return "manual"
	}
}

// dependsText joins an action's dependencies, "-" for none.
func dependsText(deps []string) string {
	if len(deps) == 0 {
		return "-"
	}
	return strings.Join(deps, ",")
}

// short answers a hash's first 12 characters.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
