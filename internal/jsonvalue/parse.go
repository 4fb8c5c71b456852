package jsonvalue

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Parse reads JSON text as a google.protobuf.Value directly: the Value
// protojson.Unmarshal makes of it, without protojson's reflection and
// tokenizer. It answers false for text it leaves to protojson — anything
// protojson refuses (text that is not one JSON value, a number out of
// float64's range, a string that is not UTF-8, a duplicate object key) and
// what this reader does not take on: a \u escape of a UTF-16 surrogate and
// values nested deeper than maxDepth. The engine's stored JSON is valid, so
// a caller's fallback is for the rare value, never the common one.
func Parse(text []byte) (*structpb.Value, bool) {
	p := parser{text: text}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.skipSpace()
	return v, p.at == len(text)
}

// maxDepth is how deeply Parse nests objects and arrays; deeper text goes
// to protojson, which has its own limit.
const maxDepth = 64

// parser reads one JSON value from text, from at.
type parser struct {
	text []byte
	at   int
}

func (p *parser) skipSpace() {
	for p.at < len(p.text) {
		switch p.text[p.at] {
		case ' ', '\t', '\n', '\r':
			p.at++
		default:
			return
		}
	}
}

// value reads the value at p.at (after any space), nested depth deep.
func (p *parser) value(depth int) (*structpb.Value, bool) {
	p.skipSpace()
	if p.at == len(p.text) {
		return nil, false
	}
	switch c := p.text[p.at]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		return structpb.NewStringValue(s), true
	case c == 't':
		return structpb.NewBoolValue(true), p.literal("true")
	case c == 'f':
		return structpb.NewBoolValue(false), p.literal("false")
	case c == 'n':
		return structpb.NewNullValue(), p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		n, ok := p.number()
		if !ok {
			return nil, false
		}
		return structpb.NewNumberValue(n), true
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if len(p.text)-p.at < len(word) || string(p.text[p.at:p.at+len(word)]) != word {
		return false
	}
	p.at += len(word)
	return true
}

func (p *parser) object(depth int) (*structpb.Value, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.at++ // '{'
	fields := map[string]*structpb.Value{}
	p.skipSpace()
	if p.at < len(p.text) && p.text[p.at] == '}' {
		p.at++
		return structpb.NewStructValue(&structpb.Struct{Fields: fields}), true
	}
	for {
		p.skipSpace()
		if p.at == len(p.text) || p.text[p.at] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		if _, dup := fields[key]; dup {
			return nil, false
		}
		p.skipSpace()
		if p.at == len(p.text) || p.text[p.at] != ':' {
			return nil, false
		}
		p.at++
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		fields[key] = v
		if !p.next('}') {
			return nil, false
		}
		if p.text[p.at-1] == '}' {
			return structpb.NewStructValue(&structpb.Struct{Fields: fields}), true
		}
	}
}

func (p *parser) array(depth int) (*structpb.Value, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.at++ // '['
	items := []*structpb.Value{}
	p.skipSpace()
	if p.at < len(p.text) && p.text[p.at] == ']' {
		p.at++
		return structpb.NewListValue(&structpb.ListValue{Values: items}), true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		items = append(items, v)
		if !p.next(']') {
			return nil, false
		}
		if p.text[p.at-1] == ']' {
			return structpb.NewListValue(&structpb.ListValue{Values: items}), true
		}
	}
}

// next reads the comma or the closing byte after a member or an item.
func (p *parser) next(closing byte) bool {
	p.skipSpace()
	if p.at == len(p.text) {
		return false
	}
	if c := p.text[p.at]; c == ',' || c == closing {
		p.at++
		return true
	}
	return false
}

// number reads a number as JSON's grammar writes one, and converts it as
// protojson does (strconv.ParseFloat, refused out of float64's range).
func (p *parser) number() (float64, bool) {
	start := p.at
	p.skip('-')
	switch {
	case p.skip('0'):
	case p.digits() == 0:
		return 0, false
	}
	if p.skip('.') && p.digits() == 0 {
		return 0, false
	}
	if p.skip('e') || p.skip('E') {
		if !p.skip('+') {
			p.skip('-')
		}
		if p.digits() == 0 {
			return 0, false
		}
	}
	n, err := strconv.ParseFloat(string(p.text[start:p.at]), 64)
	return n, err == nil
}

func (p *parser) skip(c byte) bool {
	if p.at < len(p.text) && p.text[p.at] == c {
		p.at++
		return true
	}
	return false
}

func (p *parser) digits() int {
	start := p.at
	for p.at < len(p.text) && p.text[p.at] >= '0' && p.text[p.at] <= '9' {
		p.at++
	}
	return p.at - start
}

// str reads a quoted string: UTF-8, no raw control character, JSON's
// escapes but those of surrogates.
func (p *parser) str() (string, bool) {
	p.at++ // '"'
	start := p.at
	for p.at < len(p.text) {
		switch c := p.text[p.at]; {
		case c == '"':
			s := p.text[start:p.at]
			p.at++
			return string(s), utf8.Valid(s)
		case c == '\\':
			return p.escaped(start)
		case c < ' ':
			return "", false
		}
		p.at++
	}
	return "", false
}

// escaped reads the rest of a string that holds an escape, from start.
func (p *parser) escaped(start int) (string, bool) {
	out := append([]byte(nil), p.text[start:p.at]...)
	for p.at < len(p.text) {
		c := p.text[p.at]
		switch {
		case c == '"':
			p.at++
			return string(out), utf8.Valid(out)
		case c < ' ':
			return "", false
		case c != '\\':
			out = append(out, c)
			p.at++
			continue
		}
		if p.at+1 == len(p.text) {
			return "", false
		}
		e := p.text[p.at+1]
		p.at += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok || utf16.IsSurrogate(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (p *parser) hex4() (rune, bool) {
	if len(p.text)-p.at < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.text[p.at:p.at+4]), 16, 16)
	p.at += 4
	return rune(n), err == nil
}
