package recording

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestRecorderBound(t *testing.T) {
	rec := Record{Module: "m", Request: &abi.Request{Handler: "h", Kind: abi.KindCreate}}
	line, _ := json.Marshal(rec)
	size := int64(len(line) + 1)
	tests := []struct {
		name    string
		max     int64
		adds    int
		written int
	}{
		{"room for all", 10 * size, 3, 3},
		{"exactly two", 2 * size, 3, 2},
		{"one byte short of two", 2*size - 1, 3, 1},
		{"none", size - 1, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, logs bytes.Buffer
			r := New(&out, tt.max, slog.New(slog.NewTextHandler(&logs, nil)))
			for range tt.adds {
				r.Add(rec)
			}
			got, err := Read(&out)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.written {
				t.Errorf("%d records written, want %d", len(got), tt.written)
			}
			if n := strings.Count(logs.String(), "Recording stopped"); (tt.written < tt.adds) != (n == 1) || n > 1 {
				t.Errorf("logged the stop %d times:\n%s", n, logs.String())
			}
		})
	}
}

func TestRedact(t *testing.T) {
	secrets := &abi.ResourceRef{Version: "v1", Plural: "secrets", Kind: "Secret"}
	pods := &abi.ResourceRef{Version: "v1", Plural: "pods", Kind: "Pod"}
	secretBody := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"password":"aHVudGVyMg=="},"stringData":{"token":"t0k"}}`
	tests := []struct {
		name string
		rec  Record
		// leak must not appear in the written line; keep must.
		leak, keep []string
	}{
		{
			name: "body of a Secret",
			rec:  Record{Request: &abi.Request{Resource: secrets, Body: json.RawMessage(secretBody)}},
			leak: []string{"aHVudGVyMg==", "t0k"}, keep: []string{`"password":"REDACTED"`, `"token":"REDACTED"`},
		},
		{
			name: "essences and diff of a Secret",
			rec: Record{Request: &abi.Request{Resource: secrets, Kind: abi.KindUpdate,
				Old: json.RawMessage(`{"data":{"password":"b2xk"}}`), New: json.RawMessage(`{"data":{"password":"bmV3"}}`),
				Diff: []abi.DiffItem{{Op: abi.DiffChange, Field: []string{"data", "password"}, Old: json.RawMessage(`"b2xk"`), New: json.RawMessage(`"bmV3"`)}}}},
			leak: []string{"b2xk", "bmV3"}, keep: []string{`"password":"REDACTED"`},
		},
		{
			name: "field handler of a Secret",
			rec: Record{Request: &abi.Request{Resource: secrets, Kind: abi.KindField,
				Old: json.RawMessage(`{"password":"b2xk"}`), New: json.RawMessage(`"bmV3"`)}},
			leak: []string{"b2xk", "bmV3", "password"},
		},
		{
			name: "a pod is kept",
			rec:  Record{Request: &abi.Request{Resource: pods, Body: json.RawMessage(`{"kind":"Pod","apiVersion":"v1","data":{"x":"keep-me"}}`)}},
			keep: []string{"keep-me"},
		},
		{
			name: "host calls: a Secret written and a list read",
			rec: Record{Request: &abi.Request{Resource: pods}, HostCalls: []HostCall{
				{Kube: &abi.KubeRequest{Verb: "create", Version: "v1", Resource: "secrets", Body: json.RawMessage(`{"data":{"k":"d3JpdHRlbg=="}}`)},
					KubeAnswer: &abi.KubeResponse{Body: json.RawMessage(secretBody)}},
				{Kube: &abi.KubeRequest{Verb: "list", Version: "v1", Resource: "secrets"},
					KubeAnswer: &abi.KubeResponse{Body: json.RawMessage(`{"kind":"SecretList","apiVersion":"v1","items":[{"metadata":{"name":"a"},"data":{"k":"bGlzdGVk"}}]}`)}},
				{Kube: &abi.KubeRequest{Verb: "get", Version: "v1", Resource: "configmaps"},
					KubeAnswer: &abi.KubeResponse{Body: json.RawMessage(`{"kind":"ConfigMap","apiVersion":"v1","data":{"k":"plain"}}`)}},
			}},
			leak: []string{"d3JpdHRlbg==", "aHVudGVyMg==", "t0k", "bGlzdGVk"}, keep: []string{"plain"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := json.Marshal(tt.rec)
			var out bytes.Buffer
			New(&out, 1<<20, slog.New(slog.NewTextHandler(io.Discard, nil))).Add(tt.rec)
			for _, s := range tt.leak {
				if strings.Contains(out.String(), s) {
					t.Errorf("%q is in the recording:\n%s", s, out.String())
				}
			}
			for _, s := range tt.keep {
				if !strings.Contains(out.String(), s) {
					t.Errorf("%q is not in the recording:\n%s", s, out.String())
				}
			}
			if after, _ := json.Marshal(tt.rec); string(after) != string(before) {
				t.Errorf("Add changed the caller's record")
			}
		})
	}
}

// The replayer answers each recorded call once, in order, compares
// Secrets' bodies redacted (as they were recorded), and answers a call the
// record does not hold with a 501 that says so.
func TestReplayer(t *testing.T) {
	get := abi.KubeRequest{Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "a"}
	put := abi.KubeRequest{Verb: "create", Version: "v1", Resource: "secrets", Namespace: "ns",
		Body: json.RawMessage(`{"data":{"k":"c2VjcmV0"}}`)}
	var rec bytes.Buffer
	New(&rec, 1<<20, nil).Add(Record{Request: &abi.Request{Handler: "h"}, HostCalls: []HostCall{
		{Kube: &get, KubeAnswer: &abi.KubeResponse{Body: json.RawMessage(`{"n":1}`)}},
		{Kube: &get, KubeAnswer: &abi.KubeResponse{Body: json.RawMessage(`{"n":2}`)}},
		{Kube: &put, KubeAnswer: &abi.KubeResponse{Body: json.RawMessage(`{}`)}},
	}})
	recs, err := Read(&rec)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReplayer(recs[0].HostCalls)
	other := get
	other.Name = "b"
	for i, tt := range []struct {
		req  abi.KubeRequest
		body string
		code int
	}{
		{get, `{"n":1}`, 0}, {put, `{}`, 0}, {other, "", 501}, {get, `{"n":2}`, 0}, {get, "", 501},
	} {
		resp := r.Kube(t.Context(), tt.req)
		switch {
		case tt.code != 0 && (resp.Error == nil || resp.Error.Code != tt.code || !strings.Contains(resp.Error.Message, "is not in the recording")):
			t.Errorf("call %d: %+v, want a %d error", i, resp, tt.code)
		case tt.code == 0 && (resp.Error != nil || string(resp.Body) != tt.body):
			t.Errorf("call %d: %+v, want %s", i, resp, tt.body)
		}
	}
	if got := r.Missed(); len(got) != 2 || got[0] != "get v1/configmaps in ns b" {
		t.Errorf("Missed() = %q", got)
	}
}
