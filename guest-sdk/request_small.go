package kopf

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// decodeSmall decodes one of the request's small members. The usual shapes
// (plain strings, integers, numbers, times, the resource, the diff) are
// decoded here; encoding/json's set-up per call (reflection, a scanner)
// costs more in wasm than these values do, and a request has a dozen of
// them. Anything else, e.g. a string with escapes, goes to encoding/json,
// which then decides what it means or why it fails.
func decodeSmall(req *abi.Request, key string, val []byte) error {
	switch key {
	case "call":
		return decodeString(val, (*string)(&req.Call))
	case "handler":
		return decodeString(val, &req.Handler)
	case "kind":
		return decodeString(val, (*string)(&req.Kind))
	case "reason":
		return decodeString(val, (*string)(&req.Reason))
	case "activity":
		return decodeString(val, (*string)(&req.Activity))
	case "name":
		return decodeString(val, &req.Name)
	case "namespace":
		return decodeString(val, &req.Namespace)
	case "uid":
		return decodeString(val, &req.UID)
	case "retry":
		return decodeInt(val, &req.Retry)
	case "runtime":
		return decodeFloat(val, &req.Runtime)
	case "started":
		return req.Started.UnmarshalJSON(val)
	case "deadline":
		return req.Deadline.UnmarshalJSON(val)
	case "resource":
		if req.Resource != nil { // a repeated key: encoding/json merges into the first
			return json.Unmarshal(val, &req.Resource)
		}
		return decodeResource(val, &req.Resource)
	case "diff":
		if req.Diff != nil {
			return json.Unmarshal(val, &req.Diff)
		}
		return decodeDiff(val, &req.Diff)
	case "indices":
		return json.Unmarshal(val, &req.Indices)
	case "admission":
		if req.Admission != nil { // a repeated key: encoding/json merges into the first
			return json.Unmarshal(val, &req.Admission)
		}
		return decodeAdmission(val, &req.Admission)
	case "conversion":
		return json.Unmarshal(val, &req.Conversion)
	case "subhandlers":
		return json.Unmarshal(val, &req.Subhandlers)
	case "loglevel":
		return decodeString(val, (*string)(&req.LogLevel))
	}
	return nil // a newer host's field: ignored, as encoding/json does
}

// plainString returns the contents of a JSON string that needs no
// decoding: printable ASCII without escapes.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	s := val[1 : len(val)-1]
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return "", false
		}
	}
	return string(s), true
}

func decodeString(val []byte, into *string) error {
	if s, ok := plainString(val); ok {
		*into = s
		return nil
	}
	return json.Unmarshal(val, into)
}

func decodeInt(val []byte, into *int) error {
	if n, err := strconv.Atoi(string(val)); err == nil {
		*into = n
		return nil
	}
	return json.Unmarshal(val, into)
}

func decodeFloat(val []byte, into *float64) error {
	if f, err := strconv.ParseFloat(string(val), 64); err == nil {
		*into = f
		return nil
	}
	return json.Unmarshal(val, into)
}

func decodeBool(val []byte, into *bool) error {
	switch string(val) {
	case "true":
		*into = true
		return nil
	case "false":
		*into = false
		return nil
	}
	return json.Unmarshal(val, into)
}

func decodeResource(val []byte, into **abi.ResourceRef) error {
	if string(val) == "null" {
		*into = nil
		return nil
	}
	ref := &abi.ResourceRef{}
	err := eachMember(val, func(key string, v []byte) error {
		switch foldKey(key) {
		case "group":
			return decodeString(v, &ref.Group)
		case "version":
			return decodeString(v, &ref.Version)
		case "plural":
			return decodeString(v, &ref.Plural)
		case "kind":
			return decodeString(v, &ref.Kind)
		case "namespaced":
			return decodeBool(v, &ref.Namespaced)
		}
		return nil
	})
	*into = ref
	return err
}

// decodeAdmission decodes a webhook's admission request: its strings and
// flag, the user's info kept as a slice of the input, the headers. Every
// admission call has one, and encoding/json's reflection over it cost a
// validating handler more than the rest of its request.
func decodeAdmission(val []byte, into **abi.AdmissionRequest) error {
	if string(val) == "null" {
		*into = nil
		return nil
	}
	a := &abi.AdmissionRequest{}
	err := eachMember(val, func(key string, v []byte) error {
		switch foldKey(key) {
		case "uid":
			return decodeString(v, &a.UID)
		case "operation":
			return decodeString(v, &a.Operation)
		case "subresource":
			return decodeString(v, &a.Subresource)
		case "dryrun":
			return decodeBool(v, &a.DryRun)
		case "userinfo":
			a.UserInfo = v
		case "headers":
			return decodeHeaders(v, &a.Headers)
		}
		return nil
	})
	*into = a
	return err
}

// decodeHeaders decodes HTTP headers: an object of arrays of strings.
func decodeHeaders(val []byte, into *map[string][]string) error {
	if string(val) == "null" {
		*into = nil
		return nil
	}
	if *into == nil {
		*into = map[string][]string{}
	}
	return eachMember(val, func(key string, v []byte) error {
		if string(v) == "null" {
			(*into)[key] = nil
			return nil
		}
		values := []string{}
		err := eachElement(v, func(v []byte) error {
			var s string
			err := decodeString(v, &s)
			values = append(values, s)
			return err
		})
		(*into)[key] = values
		return err
	})
}

// decodeDiff decodes the diff: an array of {op, field, old, new}, with old
// and new kept as slices of the input.
func decodeDiff(val []byte, into *[]abi.DiffItem) error {
	if string(val) == "null" {
		*into = nil
		return nil
	}
	items := []abi.DiffItem{} // [] is an empty diff, not nil, as in encoding/json
	err := eachElement(val, func(v []byte) error {
		var item abi.DiffItem
		if string(v) == "null" {
			items = append(items, item)
			return nil
		}
		err := eachMember(v, func(key string, v []byte) error {
			switch foldKey(key) {
			case "op":
				return decodeString(v, (*string)(&item.Op))
			case "field":
				if string(v) == "null" {
					item.Field = nil
					return nil
				}
				// A repeated key replaces, and [] is an empty path (a field
				// handler's own field), not nil: as encoding/json does.
				item.Field = []string{}
				return eachElement(v, func(v []byte) error {
					var name string
					err := decodeString(v, &name)
					item.Field = append(item.Field, name)
					return err
				})
			case "old":
				item.Old = v
			case "new":
				item.New = v
			}
			return nil
		})
		items = append(items, item)
		return err
	})
	*into = items
	return err
}

// eachElement calls fn with each element of the JSON array in b, as a
// slice of b.
func eachElement(b []byte, fn func(val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return fmt.Errorf("%w: not an array", errSyntax)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return trailing(b, i+1)
	}
	for {
		end, err := valueEnd(b, i)
		if err != nil {
			return err
		}
		if err := fn(b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return trailing(b, i+1)
		default:
			return fmt.Errorf("%w: in an array", errSyntax)
		}
	}
}
