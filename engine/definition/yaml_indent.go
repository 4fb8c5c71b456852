package definition

import (
	"fmt"
	"strings"
)

// indentationHint finds the first line whose indentation matches no block
// it could belong to, and answers a hint naming it: the YAML parser reports
// such a mistake where the enclosing block began, often lines away (a key
// indented 3 spaces under a step's keys at 4 is reported at "steps:").
// It answers "" when every line's indentation fits. The lines of block
// scalars (| and >) and of flow collections ([…], {…}) spanning lines are
// skipped: they may be indented freely.
func indentationHint(data []byte) string {
	var open []int // the indentations of the enclosing blocks, innermost last
	opens := false // whether the previous line ended with a key that opens a block
	scalar, depth := -1, 0
	for i, line := range strings.Split(string(data), "\n") {
		content := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case content == "" || strings.HasPrefix(content, "#") || content == "---":
			continue
		case scalar >= 0 && indent > scalar, depth > 0:
			depth += strings.Count(content, "[") + strings.Count(content, "{") - strings.Count(content, "]") - strings.Count(content, "}")
			continue
		}
		scalar = -1
		for len(open) > 0 && open[len(open)-1] > indent {
			open = open[:len(open)-1]
		}
		top := -1
		if len(open) > 0 {
			top = open[len(open)-1]
		}
		if top >= 0 && top != indent && (top > indent || !opens) {
			return fmt.Sprintf(" (line %d is indented %d spaces, which matches no enclosing block: check its indentation)", i+1, indent)
		}
		if top != indent {
			open = append(open, indent)
		}
		rest := content
		for strings.HasPrefix(rest, "- ") { // "- key: v" opens a block at the key's column too
			next := strings.TrimLeft(rest[2:], " ")
			indent += len(rest) - len(next)
			open = append(open, indent)
			rest = next
		}
		value := ""
		if k := strings.Index(rest, ": "); k >= 0 {
			value = strings.TrimSpace(rest[k+2:])
		}
		// A key without a value, or with only an anchor or a tag, opens a block.
		opens = strings.HasSuffix(rest, ":") || rest == "-" ||
			(value != "" && (value[0] == '&' || value[0] == '!') && !strings.Contains(value, " "))
		if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
			scalar = indent
		}
		depth = strings.Count(value, "[") + strings.Count(value, "{") - strings.Count(value, "]") - strings.Count(value, "}")
	}
	return ""
}
