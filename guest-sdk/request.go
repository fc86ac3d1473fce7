package kopf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// decodeRequest decodes an abi.Request as json.Unmarshal does, in one pass
// over the input. The large members (body, old, new, memo, param and an
// event's object) stay slices of the input, checked only for balanced
// brackets and terminated strings: encoding/json scans every byte of them
// twice, which costs milliseconds per 64 KB in wasm. They are fully
// decoded if and when the handler reads them. The small members go through
// encoding/json.
func decodeRequest(in []byte) (*abi.Request, error) {
	req := &abi.Request{}
	if string(bytes.TrimSpace(in)) == "null" {
		return req, nil
	}
	err := eachMember(in, func(key string, val []byte) error {
		switch key = foldKey(key); key {
		case "body":
			req.Body = val
		case "old":
			req.Old = val
		case "new":
			req.New = val
		case "memo":
			req.Memo = val
		case "param":
			req.Param = val
		case "event":
			return decodeEvent(val, &req.Event)
		default:
			return decodeSmall(req, key, val)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kopf: decode the request: %w", err)
	}
	return req, nil
}

func decodeEvent(val []byte, into **abi.WatchEvent) error {
	if string(val) == "null" {
		*into = nil
		return nil
	}
	ev := *into
	if ev == nil {
		ev = &abi.WatchEvent{}
	}
	err := eachMember(val, func(key string, v []byte) error {
		switch foldKey(key) {
		case "type":
			return json.Unmarshal(v, &ev.Type)
		case "object":
			ev.Object = v
		}
		return nil
	})
	*into = ev
	return err
}

// foldKey matches keys case-insensitively, as encoding/json does, for the
// ASCII names of the ABI.
func foldKey(key string) string {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(key)
		}
	}
	return key
}

var errSyntax = errors.New("malformed JSON")

// eachMember calls fn with each member of the JSON object in b, in order:
// the key decoded, the value as a slice of b.
func eachMember(b []byte, fn func(key string, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fmt.Errorf("%w: not an object", errSyntax)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		key, end, err := member(b, i)
		if err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("%w: no colon after %q", errSyntax, key)
		}
		start := skipSpace(b, i+1)
		if end, err = valueEnd(b, start); err != nil {
			return err
		}
		if err := fn(key, b[start:end]); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return trailing(b, i+1)
		default:
			return fmt.Errorf("%w: after %q", errSyntax, key)
		}
	}
}

// member reads the key at b[i], returning it and the index after it.
func member(b []byte, i int) (string, int, error) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, fmt.Errorf("%w: expected a key", errSyntax)
	}
	end, escaped, err := stringEnd(b, i)
	if err != nil {
		return "", 0, err
	}
	if !escaped {
		return string(b[i+1 : end-1]), end, nil
	}
	var key string
	err = json.Unmarshal(b[i:end], &key)
	return key, end, err
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return fmt.Errorf("%w: data after the object", errSyntax)
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i], and
// whether it has escapes. It looks for quotes with bytes.IndexByte (an
// assembly loop, also in wasm) rather than byte by byte: a quote preceded
// by an odd number of backslashes is escaped.
func stringEnd(b []byte, i int) (int, bool, error) {
	escaped := false
	for j := i + 1; j <= len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		if !escaped && bytes.IndexByte(b[j:q], '\\') >= 0 {
			escaped = true
		}
		backslashes := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1, escaped, nil
		}
		j = q + 1
	}
	return 0, false, fmt.Errorf("%w: unterminated string", errSyntax)
}

// valueEnd returns the index after the JSON value that starts at b[i].
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("%w: missing value", errSyntax)
	}
	switch b[i] {
	case '"':
		end, _, err := stringEnd(b, i)
		return end, err
	case '{', '[':
		return containerEnd(b, i)
	case ',', '}', ']', ':':
		return 0, fmt.Errorf("%w: missing value", errSyntax)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	return j, nil
}

// containerEnd returns the index after the object or array at b[i],
// matching bracket kinds.
func containerEnd(b []byte, i int) (int, error) {
	stack := make([]byte, 0, 16)
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			end, _, err := stringEnd(b, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '{', '[':
			stack = append(stack, c+2) // '{'+2 == '}', '['+2 == ']'
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, fmt.Errorf("%w: unbalanced %q", errSyntax, c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: unterminated %q", errSyntax, b[i])
}
