package runquery

import (
	"strings"
	"unicode/utf8"
)

// tokKind is a token's kind.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tLParen
	tRParen
	tComma
	tOp      // = != < <= > >=
	tAnd     // AND
	tOr      // OR
	tNot     // NOT
	tIn      // IN
	tStarts  // STARTS_WITH
	tTrue    // TRUE
	tFalse   // FALSE
	tNull    // NULL
	tInvalid // a lexing error; text is the message
)

// token is one token: its kind, its text (a string's unquoted value) and
// its 1-based column.
type token struct {
	kind tokKind
	text string
	col  int
}

// keywords are the words of the language, in any case.
var keywords = map[string]tokKind{"AND": tAnd, "OR": tOr, "NOT": tNot, "IN": tIn, "STARTS_WITH": tStarts,
	"TRUE": tTrue, "FALSE": tFalse, "NULL": tNull}

// describe names a token for a message (a string's value is not quoted).
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end"
	case tString:
		return "a string"
	case tNumber:
		return "a number"
	case tIdent:
		return "'" + t.text + "'"
	}
	return "'" + t.text + "'"
}

// lexer splits a query into tokens.
type lexer struct {
	src string
	pos int // byte offset
	col int // 1-based column of pos
}

// lex answers every token of src, ending with tEOF, or the first lexing
// error.
func lex(src string) ([]token, *Error) {
	l := &lexer{src: src, col: 1}
	var out []token
	for {
		t := l.next()
		if t.kind == tInvalid {
			return nil, errorAt(t.col, "%s", t.text)
		}
		out = append(out, t)
		if t.kind == tEOF {
			return out, nil
		}
	}
}

// advance moves past n bytes.
func (l *lexer) advance(n int) {
	l.col += utf8.RuneCountInString(l.src[l.pos : l.pos+n])
	l.pos += n
}

// next answers the next token.
func (l *lexer) next() token {
	for l.pos < len(l.src) && strings.IndexByte(" \t\r\n", l.src[l.pos]) >= 0 {
		l.advance(1)
	}
	col := l.col
	if l.pos >= len(l.src) {
		return token{kind: tEOF, col: col}
	}
	c := l.src[l.pos]
	switch {
	case c == '(' || c == ')' || c == ',':
		l.advance(1)
		kind := map[byte]tokKind{'(': tLParen, ')': tRParen, ',': tComma}[c]
		return token{kind: kind, text: string(c), col: col}
	case c == '=' || c == '<' || c == '>' || c == '!':
		return l.operator(col)
	case c == '"' || c == '\'':
		return l.str(col)
	case c == '-' || c >= '0' && c <= '9':
		return l.number(col)
	case isIdentStart(c):
		n := 1
		for l.pos+n < len(l.src) && isIdentPart(l.src[l.pos+n]) {
			n++
		}
		word := l.src[l.pos : l.pos+n]
		l.advance(n)
		if k, ok := keywords[strings.ToUpper(word)]; ok {
			return token{kind: k, text: strings.ToUpper(word), col: col}
		}
		return token{kind: tIdent, text: word, col: col}
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.pos:])
	if r == utf8.RuneError {
		return token{kind: tInvalid, text: "a byte that is not UTF-8", col: col}
	}
	return token{kind: tInvalid, text: "unexpected character '" + string(r) + "'", col: col}
}

// operator reads = != < <= > >=.
func (l *lexer) operator(col int) token {
	two := ""
	if l.pos+2 <= len(l.src) {
		two = l.src[l.pos : l.pos+2]
	}
	switch two {
	case "!=", "<=", ">=":
		l.advance(2)
		return token{kind: tOp, text: two, col: col}
	case "==":
		return token{kind: tInvalid, text: "'==' is written '='", col: col}
	case "<>":
		return token{kind: tInvalid, text: "'<>' is written '!='", col: col}
	}
	c := l.src[l.pos]
	if c == '!' {
		return token{kind: tInvalid, text: "unexpected character '!' (not equal is '!=', negation NOT)", col: col}
	}
	l.advance(1)
	return token{kind: tOp, text: string(c), col: col}
}

// str reads a quoted string: "…" or '…', with the escapes \\ \" \' \n \t
// \r and \uXXXX.
func (l *lexer) str(col int) token {
	quote := l.src[l.pos]
	var b strings.Builder
	i := l.pos + 1
	for i < len(l.src) {
		c := l.src[i]
		switch {
		case c == quote:
			l.advance(i + 1 - l.pos)
			return token{kind: tString, text: b.String(), col: col}
		case c == '\\':
			n, ok := unescape(&b, l.src[i:])
			if !ok {
				return token{kind: tInvalid, text: "a bad escape in the string starting", col: col}
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return token{kind: tInvalid, text: "an unterminated string starting", col: col}
}

// unescape writes the escape at the start of s and answers its length.
func unescape(b *strings.Builder, s string) (int, bool) {
	if len(s) < 2 {
		return 0, false
	}
	switch s[1] {
	case '\\', '"', '\'':
		b.WriteByte(s[1])
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'u':
		if len(s) < 6 {
			return 0, false
		}
		var r rune
		for _, h := range s[2:6] {
			d := strings.IndexRune("0123456789abcdef", h|0x20)
			if d < 0 {
				return 0, false
			}
			r = r*16 + rune(d)
		}
		if !utf8.ValidRune(r) {
			return 0, false
		}
		b.WriteRune(r)
		return 6, true
	default:
		return 0, false
	}
	return 2, true
}

// number reads -?digits(.digits)?([eE][+-]?digits)?.
func (l *lexer) number(col int) token {
	s := l.src[l.pos:]
	i := 0
	if s[0] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if digits() == 0 {
		return token{kind: tInvalid, text: "expected digits after '-'", col: col}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return token{kind: tInvalid, text: "expected digits after the decimal point", col: col}
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return token{kind: tInvalid, text: "expected digits in the exponent", col: col}
		}
	}
	if i < len(s) && isIdentPart(s[i]) {
		return token{kind: tInvalid, text: "a number runs into a name", col: col}
	}
	text := s[:i]
	l.advance(i)
	return token{kind: tNumber, text: text, col: col}
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }
