package runquery

// MaxLength is the longest query, in bytes; MaxDepth the deepest nesting of
// parentheses and NOT; MaxTerms the most comparisons; MaxList the most
// values in one IN list.
const (
	MaxLength = 8 << 10
	MaxDepth  = 32
	MaxTerms  = 200
	MaxList   = 500
)

// Parse reads a query. Its error is an [*Error] naming the column and the
// problem ("expected a value after '=' at column 14").
func Parse(src string) (Expr, error) {
	if len(src) > MaxLength {
		return nil, errorAt(1, "the query is longer than %d bytes", MaxLength)
	}
	toks, lerr := lex(src)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, errorAt(1, "the query is empty")
	}
	e, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		if t.kind == tRParen {
			return nil, errorAt(t.col, "unexpected ')' without its '('")
		}
		return nil, expected(t, "expected AND, OR or the end")
	}
	return e, nil
}

// parser reads tokens.
type parser struct {
	toks  []token
	i     int
	terms int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) take() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// or reads terms joined by OR.
func (p *parser) or(depth int) (Expr, error) {
	first, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	terms := []Expr{first}
	for p.peek().kind == tOr {
		p.take()
		t, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return &Or{Terms: terms}, nil
}

// and reads terms joined by AND.
func (p *parser) and(depth int) (Expr, error) {
	first, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	terms := []Expr{first}
	for p.peek().kind == tAnd {
		p.take()
		t, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return &And{Terms: terms}, nil
}

// not reads NOT x, or a primary.
func (p *parser) not(depth int) (Expr, error) {
	if depth >= MaxDepth {
		return nil, errorAt(p.peek().col, "the query nests deeper than %d", MaxDepth)
	}
	if t := p.peek(); t.kind == tNot {
		p.take()
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Not{X: x, Col: t.col}, nil
	}
	return p.primary(depth)
}

// primary reads ( query ) or a comparison.
func (p *parser) primary(depth int) (Expr, error) {
	t := p.peek()
	if t.kind == tLParen {
		p.take()
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.kind != tRParen {
			return nil, expected(c, "expected ')' to close the '(' of column %d", t.col)
		}
		p.take()
		return e, nil
	}
	if t.kind != tIdent {
		return nil, expected(t, "expected a field name")
	}
	return p.comparison()
}

// comparison reads field op value, field [NOT] IN (values) or field
// STARTS_WITH value.
func (p *parser) comparison() (Expr, error) {
	field := p.take()
	if p.terms++; p.terms > MaxTerms {
		return nil, errorAt(field.col, "the query has more than %d comparisons", MaxTerms)
	}
	c := &Compare{Field: field.text, FieldCol: field.col}
	op := p.take()
	c.OpCol = op.col
	switch op.kind {
	case tOp:
		c.Op = Op(op.text)
	case tStarts:
		c.Op = StartsWith
	case tIn:
		c.Op = In
		return p.list(c, op)
	case tNot:
		if p.peek().kind != tIn {
			return nil, expected(p.peek(), "expected IN after NOT in a comparison")
		}
		p.take()
		c.Op = NotIn
		return p.list(c, op)
	default:
		return nil, expected(op, "expected an operator after '%s' (=, !=, <, <=, >, >=, IN, NOT IN, STARTS_WITH)", field.text)
	}
	v, err := p.value(op)
	if err != nil {
		return nil, err
	}
	c.Values = []Literal{v}
	return c, nil
}

// list reads ( value, … ) after IN.
func (p *parser) list(c *Compare, in token) (Expr, error) {
	open := p.take()
	if open.kind != tLParen {
		return nil, expected(open, "expected '(' after %s", c.Op)
	}
	for {
		v, err := p.value(in)
		if err != nil {
			return nil, err
		}
		if c.Values = append(c.Values, v); len(c.Values) > MaxList {
			return nil, errorAt(v.Col, "an IN list has more than %d values", MaxList)
		}
		sep := p.take()
		if sep.kind == tRParen {
			return c, nil
		}
		if sep.kind != tComma {
			return nil, expected(sep, "expected ',' or ')' in the list of %s", c.Op)
		}
	}
}

// value reads one literal after the operator op.
func (p *parser) value(op token) (Literal, error) {
	t := p.take()
	switch t.kind {
	case tString:
		return Literal{Kind: LitString, Text: t.text, Col: t.col}, nil
	case tNumber:
		return Literal{Kind: LitNumber, Text: t.text, Col: t.col}, nil
	case tTrue, tFalse:
		return Literal{Kind: LitBool, Bool: t.kind == tTrue, Col: t.col}, nil
	case tNull:
		return Literal{Kind: LitNull, Col: t.col}, nil
	}
	e := expected(t, "expected a value after '%s'", op.text)
	if t.kind == tIdent {
		e.Found += " (quote a string: \"…\")"
	}
	return Literal{}, e
}
