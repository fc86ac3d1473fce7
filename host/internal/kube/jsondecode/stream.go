package jsondecode

// Reading JSON from a response body a piece at a time, for the watch
// decoder (watch.go) and the list decoder (list.go): neither
// holds more of the body than the document (event, list item) it is
// decoding.

import (
	"fmt"
	"io"
)

// streamBuffer holds what has been read of a body and not yet decoded.
type streamBuffer struct {
	body io.Reader
	buf  []byte
	r, w int   // buf[r:w] is read but not yet decoded
	err  error // the error that came with the last bytes read
}

func newStreamBuffer(body io.Reader) streamBuffer {
	return streamBuffer{body: body, buf: make([]byte, watchBufferSize)}
}

// fill reads more of the stream into the buffer, moving the undecoded bytes
// to its start and growing it when it is full (and shrinking it again,
// once empty, after a large document).
func (d *streamBuffer) fill() error {
	if d.err != nil {
		return d.err
	}
	switch {
	case d.r == d.w && len(d.buf) > 4*watchBufferSize:
		d.buf = make([]byte, watchBufferSize)
		d.r, d.w = 0, 0
	case d.r > 0:
		d.w = copy(d.buf, d.buf[d.r:d.w])
		d.r = 0
	}
	if d.w == len(d.buf) {
		d.buf = append(d.buf, make([]byte, len(d.buf))...)
	}
	for {
		n, err := d.body.Read(d.buf[d.w:])
		d.w += n
		if n > 0 {
			d.err = err
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// peek skips whitespace and returns the next byte, without taking it;
// the body's end there is io.ErrUnexpectedEOF.
func (d *streamBuffer) peek() (byte, error) {
	for {
		if d.r = skipJSONSpace(d.buf, d.r, d.w); d.r < d.w {
			return d.buf[d.r], nil
		}
		if err := d.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
}

// take skips whitespace and takes the next byte, which must be one of want.
func (d *streamBuffer) take(want string) (byte, error) {
	c, err := d.peek()
	if err != nil {
		return 0, err
	}
	for i := range len(want) {
		if c == want[i] {
			d.r++
			return c, nil
		}
	}
	return 0, fmt.Errorf("invalid character %q, want one of %q", c, want)
}

// value returns the bytes of the JSON value that starts at the next
// non-space byte, valid until the next call; the parser checks them.
func (d *streamBuffer) value() ([]byte, error) {
	c, err := d.peek()
	if err != nil {
		return nil, err
	}
	var scan func([]byte) (int, bool)
	switch c {
	case '{', '[':
		fs := frameScanner{}
		scan = fs.scan
	case '"':
		scan = scanString
	default:
		scan = scanScalar
	}
	for {
		if end, ok := scan(d.buf[d.r:d.w]); ok {
			v := d.buf[d.r : d.r+end]
			d.r += end
			return v, nil
		}
		if err := d.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// scanString returns the length of the string that b starts with (at its
// opening quote), when b holds all of it.
func scanString(b []byte) (int, bool) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// scanScalar returns the length of the number or literal that b starts
// with, when b holds what follows it (0 when b starts with a delimiter:
// no value, which the parser rejects).
func scanScalar(b []byte) (int, bool) {
	for i, c := range b {
		switch c {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i, true
		}
	}
	return 0, false
}
