package expr

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
)

// Limits bound what one expression may be and do. Zero fields take the
// defaults of [DefaultLimits].
type Limits struct {
	// Size is the most code points an expression's source may have.
	Size int
	// Nesting is the deepest the parser lets an expression nest.
	Nesting int
	// Comprehensions is the deepest comprehensions (map, filter, all…) may
	// nest in one another.
	Comprehensions int
	// Cost is the most an evaluation may cost in CEL's cost units (about
	// one per operation and per element a function touches); past it the
	// evaluation fails.
	Cost uint64
	// ResultBytes is the longest a result's JSON may be.
	ResultBytes int
	// Depth is the deepest a JSON value read or written may nest.
	Depth int
	// ListItems caps lists.range(n).
	ListItems int
}

// DefaultLimits are the limits an [Env] applies unless told otherwise.
var DefaultLimits = Limits{
	Size:           4096,
	Nesting:        32,
	Comprehensions: 3,
	Cost:           1_000_000,
	ResultBytes:    256 << 10,
	Depth:          64,
	ListItems:      10_000,
}

// withDefaults fills l's zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	l.Size, l.Nesting, l.Comprehensions = pick(l.Size, d.Size), pick(l.Nesting, d.Nesting), pick(l.Comprehensions, d.Comprehensions)
	l.ResultBytes, l.Depth, l.ListItems = pick(l.ResultBytes, d.ResultBytes), pick(l.Depth, d.Depth), pick(l.ListItems, d.ListItems)
	if l.Cost == 0 {
		l.Cost = d.Cost
	}
	return l
}

// The variables' names.
const (
	varInput = "input"
	varSteps = "steps"
	varRunID = "run.id"
	varItem  = "item"
	varIndex = "index"
	// output is the one field of steps.<id>.
	output = "output"
)

// Env compiles expressions: the CEL environment of Weft's definitions, its
// variables and libraries, and the limits. It is safe for concurrent use;
// build one and keep it.
type Env struct {
	limits Limits
	plain  *cel.Env // input, steps, run.id
	fanOut *cel.Env // and item, index
}

// NewEnv builds an Env with limits l (zero fields: the defaults).
func NewEnv(l Limits) (*Env, error) {
	l = l.withDefaults()
	plain, err := cel.NewEnv(options(l)...)
	if err != nil {
		return nil, fmt.Errorf("expression environment: %w", err)
	}
	fanOut, err := plain.Extend(cel.Variable(varItem, cel.DynType), cel.Variable(varIndex, cel.IntType))
	if err != nil {
		return nil, fmt.Errorf("expression environment: %w", err)
	}
	return &Env{limits: l, plain: plain, fanOut: fanOut}, nil
}

// options are the environment's declarations, libraries and limits. Every
// library is deterministic: none reads a clock or a random source.
func options(l Limits) []cel.EnvOption {
	return []cel.EnvOption{
		cel.Variable(varInput, cel.DynType),
		cel.Variable(varSteps, cel.MapType(cel.StringType, cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable(varRunID, cel.StringType),
		cel.CrossTypeNumericComparisons(true),
		cel.DefaultUTCTimeZone(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsValidateFormatCalls(true)),
		ext.Math(),
		ext.Lists(ext.ListsMaxRangeSize(int64(l.ListItems))),
		ext.Sets(),
		ext.Encoders(),
		ext.TwoVarComprehensions(),
		cel.ParserExpressionSizeLimit(l.Size),
		cel.ParserRecursionLimit(l.Nesting),
		cel.ASTValidators(
			cel.ValidateComprehensionNestingLimit(l.Comprehensions),
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
		),
	}
}

// Limits answers the limits e applies.
func (e *Env) Limits() Limits { return e.limits }
