package flowcontrol

import "fmt"

// The rule ids an [Error] carries.
const (
	RuleRateFormat = "rate_format"
	RuleRateCount  = "rate_count"
	RuleRatePeriod = "rate_period"
	RuleBurst      = "burst_range"
	RuleLimit      = "limit_range"
	RulePriority   = "priority_range"
	RuleWeight     = "weight_range"
)

// Error is a value that breaks one of the package's rules. It names the
// rule, not the field: the caller knows the YAML path and puts it first
// ("steps[2].throttle.rate: …"). Its message never quotes the value.
type Error struct {
	Rule    string
	Message string
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

func errorf(rule, format string, args ...any) *Error {
	return &Error{Rule: rule, Message: fmt.Sprintf(format, args...)}
}
