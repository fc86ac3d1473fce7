package jsondecode

// Numbers for parseJSON (see value.go): the integer-or-float rule of
// sigs.k8s.io/json's PreserveInts, without a string allocation for the
// common small integers.

import "strconv"

// number reads the number at pos: an int64 when it has no '.' and fits
// one, else a float64 (the rule of sigs.k8s.io/json's PreserveInts).
func (p *jsonParser) number() (any, error) {
	start := p.pos
	end, dot, exp, err := p.scanNumber()
	if err != nil {
		return nil, err
	}
	tok := p.data[start:end]
	p.pos = end
	if !dot && !exp && len(tok) <= 18 {
		return smallInt(tok), nil
	}
	if !dot {
		if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		p.pos = start
		return nil, p.errorf("number %s does not fit a float64", tok)
	}
	return f, nil
}

// scanNumber finds the end of the number at pos, checking its grammar,
// and says whether it has a fraction or an exponent.
func (p *jsonParser) scanNumber() (end int, dot, exp bool, err error) {
	d, i := p.data, p.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		p.pos = i
		return 0, false, false, p.errorf("invalid number, want a digit")
	}
	if i < len(d) && d[i] == '.' {
		dot = true
		if i = digits(d, i+1); d[i-1] == '.' {
			p.pos = i
			return 0, false, false, p.errorf("invalid number, want a digit after '.'")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		exp = true
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if j := digits(d, i); j > i {
			i = j
		} else {
			p.pos = i
			return 0, false, false, p.errorf("invalid number, want a digit in the exponent")
		}
	}
	return i, dot, exp, nil
}

// digits returns the end of the run of digits at d[i:].
func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// smallInt converts an integer of at most 18 digits and a sign, which
// cannot overflow an int64.
func smallInt(tok []byte) int64 {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	var n int64
	for _, c := range tok {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}
