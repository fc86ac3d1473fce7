package settings

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// ReadFile is [Load] of a file; its errors start with "config <path>: ".
func ReadFile(path string, base Settings) (Settings, error) {
	f, err := os.Open(path)
	if err != nil {
		return base, fmt.Errorf("config %s: %w", path, err)
	}
	defer f.Close()
	s, err := Load(f, base)
	if err != nil {
		return base, fmt.Errorf("config %s: %w", path, err)
	}
	return s, nil
}

// Load reads settings in YAML (or JSON) from r over base (usually
// [Default]()) and validates the result. The keys are the JSON names of the
// fields, group by group:
//
//	execution:
//	  workers: 32
//	watching:
//	  serverTimeout: 10m
//
// Durations are Go duration strings ("30s", "1m30s"), lists YAML
// sequences, posting.level "info" or "warning". Keys left out keep base's
// values. Decoding is strict: an unknown or repeated key, a value of the
// wrong type and a value out of its range are errors that name the key, one
// line each (several are joined with "; ").
func Load(r io.Reader, base Settings) (Settings, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return base, err
	}
	doc, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
		return base, fmt.Errorf("%s", strings.Join(strings.Fields(msg), " "))
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return base, fmt.Errorf("not YAML or JSON: %w", err)
	}
	s := base
	s.Queueing.ErrorDelays = slices.Clone(base.Queueing.ErrorDelays)
	s.Kube.ErrorBackoffs = slices.Clone(base.Kube.ErrorBackoffs)
	s.Admission.ExtraSANs = slices.Clone(base.Admission.ExtraSANs)
	if raw == nil {
		return s, s.Validate()
	}
	if _, ok := raw.(map[string]any); !ok {
		return base, fmt.Errorf("want a mapping of settings groups (persistence, execution, ...), got %s", describe(raw))
	}
	if err := decode(reflect.ValueOf(&s).Elem(), "", raw); err != nil {
		return base, err
	}
	if err := s.Validate(); err != nil {
		return base, err
	}
	return s, nil
}

// durationExamples is what an error about a duration shows.
const durationExamples = `a duration such as "30s", "1m30s" or "100ms"`

var (
	durationType    = reflect.TypeFor[time.Duration]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decode sets v, whose key is key, from raw (a value decoded from JSON with
// UseNumber).
func decode(v reflect.Value, key string, raw any) error {
	fail := func(format string, args ...any) error {
		return &Error{Key: key, Problem: fmt.Sprintf(format, args...)}
	}
	if reflect.PointerTo(v.Type()).Implements(textUnmarshaler) {
		s, ok := raw.(string)
		if !ok {
			return fail("want a string, got %s", describe(raw))
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return fail("%v", err)
		}
		return nil
	}
	switch {
	case v.Type() == durationType:
		s, ok := raw.(string)
		if !ok {
			return fail("want %s, got %s", durationExamples, describe(raw))
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fail("want %s, got %q", durationExamples, s)
		}
		v.SetInt(int64(d))
		return nil
	case v.Kind() == reflect.Struct:
		return decodeGroup(v, key, raw)
	case v.Kind() == reflect.Slice:
		items, ok := raw.([]any)
		if !ok {
			return fail("want a list, got %s ([] for none)", describe(raw))
		}
		out := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, item := range items {
			if err := decode(out.Index(i), fmt.Sprintf("%s[%d]", key, i), item); err != nil {
				return err
			}
		}
		v.Set(out)
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			return fail("want a string, got %s", describe(raw))
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			return fail("want true or false, got %s", describe(raw))
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := raw.(json.Number)
		if !ok {
			return fail("want an integer, got %s", describe(raw))
		}
		i, err := strconv.ParseInt(n.String(), 10, v.Type().Bits())
		if err != nil {
			return fail("want an integer of %d bits, got %s", v.Type().Bits(), n)
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := raw.(json.Number)
		if !ok {
			return fail("want an integer, got %s", describe(raw))
		}
		u, err := strconv.ParseUint(n.String(), 10, v.Type().Bits())
		if err != nil {
			return fail("want an integer from 0 to %d, got %s", uint64(1)<<v.Type().Bits()-1, n)
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		n, ok := raw.(json.Number)
		if !ok {
			return fail("want a number, got %s", describe(raw))
		}
		f, err := strconv.ParseFloat(n.String(), v.Type().Bits())
		if err != nil {
			return fail("want a number, got %s", n)
		}
		v.SetFloat(f)
	default:
		return fail("cannot be set from a file (%s)", v.Type()) // a field type this decoder lacks: a bug
	}
	return nil
}

// decodeGroup sets the fields of a struct from a mapping, by their JSON
// names; unknown keys are errors. The fields of an embedded struct (a
// group's [Lease]) are the group's own, as in encoding/json.
func decodeGroup(v reflect.Value, key string, raw any) error {
	if raw == nil {
		return nil // "group:" with nothing under it
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return &Error{Key: key, Problem: "want a mapping of settings, got " + describe(raw)}
	}
	fields := map[string][]int{}
	var names []string
	for _, f := range reflect.VisibleFields(v.Type()) {
		if name := JSONName(f); name != "" && !f.Anonymous {
			fields[name] = f.Index
			names = append(names, name)
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sub := k
		if key != "" {
			sub = key + "." + k
		}
		i, ok := fields[k]
		if !ok {
			what := "settings group"
			if key != "" {
				what = key + " setting"
			}
			return &Error{Key: sub, Problem: fmt.Sprintf("unknown %s (known: %s)", what, strings.Join(names, ", "))}
		}
		if err := decode(v.FieldByIndex(i), sub, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// JSONName is the name of a settings field in YAML and JSON: its json tag,
// "" for fields without one.
func JSONName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// describe names a decoded JSON value for an error message.
func describe(raw any) string {
	switch x := raw.(type) {
	case nil:
		return "nothing (null)"
	case string:
		return strconv.Quote(x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", raw)
}
