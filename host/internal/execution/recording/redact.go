package recording

import (
	"encoding/json"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Redacted replaces each value of a Secret's data and stringData: the keys
// stay, so a replay still sees which there are.
const Redacted = "REDACTED"

// RedactRecord blanks the Secrets' data in rec, in place but without
// changing what its pointers pointed to (the request and the host calls are
// copied): in the request (the body, the event's, review's and
// conversion's objects, and for a Secret's handlers the old and new
// essences, field values and diff), in the bodies of Kubernetes requests
// and in their answers.
func RedactRecord(rec *Record) {
	if rec.Request != nil {
		rec.Request = RedactRequest(rec.Request)
	}
	calls := make([]HostCall, len(rec.HostCalls))
	for i, c := range rec.HostCalls {
		if c.Kube != nil {
			k := RedactKube(*c.Kube)
			c.Kube = &k
		}
		if c.KubeAnswer != nil {
			a := *c.KubeAnswer
			a.Body = redactJSON(a.Body, c.Kube != nil && isSecrets(c.Kube.Group, c.Kube.Resource))
			c.KubeAnswer = &a
		}
		if c.IndexAnswer != nil {
			a := *c.IndexAnswer
			a.Values = append([]json.RawMessage(nil), a.Values...)
			for j := range a.Values {
				a.Values[j] = redactJSON(a.Values[j], false)
			}
			a.Index = redactJSON(a.Index, false)
			c.IndexAnswer = &a
		}
		calls[i] = c
	}
	if rec.HostCalls != nil {
		rec.HostCalls = calls
	}
}

// RedactRequest returns a copy of req with Secrets' data blanked.
func RedactRequest(req *abi.Request) *abi.Request {
	raw, err := json.Marshal(req)
	if err != nil {
		return &abi.Request{Handler: req.Handler, Kind: req.Kind} // nothing of it can be kept safely
	}
	out := new(abi.Request)
	if json.Unmarshal(redactJSON(raw, false), out) != nil {
		return &abi.Request{Handler: req.Handler, Kind: req.Kind}
	}
	if r := out.Resource; r == nil || !isSecrets(r.Group, r.Plural) {
		return out
	}
	if out.Kind == abi.KindField { // values of some field of a Secret: maybe its data
		out.Old, out.New = blank(out.Old), blank(out.New)
		for i := range out.Diff {
			out.Diff[i].Old, out.Diff[i].New = blank(out.Diff[i].Old), blank(out.Diff[i].New)
		}
		return out
	}
	out.Old, out.New = redactJSON(out.Old, true), redactJSON(out.New, true)
	for i, d := range out.Diff {
		if len(d.Field) == 0 || d.Field[0] == "data" || d.Field[0] == "stringData" {
			out.Diff[i].Old, out.Diff[i].New = redactDiffValue(d.Field, d.Old), redactDiffValue(d.Field, d.New)
		}
	}
	return out
}

// RedactKube returns req with its body blanked when it writes a Secret.
func RedactKube(req abi.KubeRequest) abi.KubeRequest {
	req.Body = redactJSON(req.Body, isSecrets(req.Group, req.Resource))
	return req
}

// isSecrets tells whether a group and plural are the core Secrets.
func isSecrets(group, plural string) bool { return group == "" && plural == "secrets" }

// redactDiffValue blanks a diff value of a Secret: the whole object (a
// root diff), the data map, or one of its values.
func redactDiffValue(field []string, v json.RawMessage) json.RawMessage {
	switch len(field) {
	case 0:
		return redactJSON(v, true)
	case 1:
		return redactMap(v)
	}
	return blank(v)
}

// redactJSON blanks the data of every Secret in v (any object of kind
// Secret and apiVersion v1, at any depth, and the items of a SecretList);
// secret says v itself is one (an essence has no kind).
func redactJSON(v json.RawMessage, secret bool) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return v
	}
	if !walk(x, secret) {
		return v
	}
	out, err := json.Marshal(x)
	if err != nil {
		return blank(v)
	}
	return out
}

// walk blanks Secrets' data in x and tells whether it changed anything.
func walk(x any, secret bool) bool {
	changed := false
	switch t := x.(type) {
	case map[string]any:
		kind, _ := t["kind"].(string)
		api, _ := t["apiVersion"].(string)
		if secret || (kind == "Secret" && api == "v1") {
			for _, k := range []string{"data", "stringData"} {
				if m, ok := t[k].(map[string]any); ok {
					for key := range m {
						m[key] = Redacted
					}
					changed = true
				} else if _, ok := t[k]; ok {
					t[k] = Redacted
					changed = true
				}
			}
		}
		list := secret || (kind == "SecretList" && api == "v1")
		for k, v := range t {
			if k == "items" && list {
				if items, ok := v.([]any); ok {
					for _, it := range items {
						changed = walk(it, true) || changed
					}
					continue
				}
			}
			if k != "data" && k != "stringData" || !(secret || kind == "Secret") {
				changed = walk(v, false) || changed
			}
		}
	case []any:
		for _, it := range t {
			changed = walk(it, false) || changed
		}
	}
	return changed
}

// redactMap blanks each value of a JSON object (a Secret's data).
func redactMap(v json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(v, &m) != nil || m == nil {
		return blank(v)
	}
	for k := range m {
		m[k] = Redacted
	}
	out, _ := json.Marshal(m)
	return out
}

// blank replaces a present value with [Redacted].
func blank(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return v
	}
	return json.RawMessage(`"` + Redacted + `"`)
}
