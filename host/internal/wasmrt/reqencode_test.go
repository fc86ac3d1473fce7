package wasmrt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// referenceEncoding is what encoding/json writes for req (HTML escaping
// off, no trailing newline): appendRequest must write the same bytes.
func referenceEncoding(t testing.TB, req *abi.Request) []byte {
	var buf bytes.Buffer
	enc := jsonEncoder(&buf)
	if err := enc.Encode(req); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func raw(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendRequestMatchesEncodingJSON(t *testing.T) {
	body := raw(t, map[string]any{"apiVersion": "kopf.dev/v1", "metadata": map[string]any{"name": "ex<&>", "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{"n": 1.5, "list": []any{1, "x\u2028", nil, true}}})
	started := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	one := 1.0
	tests := []struct {
		name string
		req  *abi.Request
	}{
		{"minimal", &abi.Request{Handler: "h", Kind: abi.KindCreate}},
		{"core resource", &abi.Request{Handler: "h", Kind: abi.KindCreate, Resource: &abi.ResourceRef{Version: "v1", Plural: "pods\"<"}}},
		{"changing", &abi.Request{Call: abi.CallHandle, Handler: "field_fn/spec.field", Kind: abi.KindField, Reason: abi.ReasonUpdate,
			Resource: &abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
			Body:     body, Name: "ex", Namespace: "ns", UID: "u-1", Old: raw(t, "a"), New: raw(t, map[string]any{"k": "v"}),
			Diff:  []abi.DiffItem{{Op: abi.DiffChange, Field: []string{"spec", "field"}, Old: raw(t, "a"), New: raw(t, "b")}},
			Retry: 3, Started: started, Runtime: 12.25, Deadline: started.Add(30 * time.Second), Param: raw(t, map[string]any{"p": []any{1, 2}}), Memo: raw(t, map[string]any{"m": one})}},
		{"strings to escape", &abi.Request{Handler: "h\"\\\n\r\t\b\f\x01\x1f<>&\u2028\u2029é\xff\xfe", Kind: "k", Name: "日本"}},
		{"event", &abi.Request{Handler: "e", Kind: abi.KindEvent, Body: body, Event: &abi.WatchEvent{Type: "MODIFIED", Object: body}}},
		{"event of the listing", &abi.Request{Handler: "e", Kind: abi.KindEvent, Event: &abi.WatchEvent{Object: body}}},
		{"indices", &abi.Request{Handler: "i", Kind: abi.KindCreate, Indices: map[string]json.RawMessage{"z": raw(t, []any{1}), "a": raw(t, map[string]any{"k": []any{"v"}}), "m\"": raw(t, nil)}}},
		{"admission", &abi.Request{Handler: "v", Kind: abi.KindValidate, Body: body, New: body,
			Admission: &abi.AdmissionRequest{UID: "u", Operation: "CREATE", DryRun: true, UserInfo: raw(t, map[string]any{"username": "me"}),
				Headers: map[string][]string{"X-A": {"1"}}}}},
		{"activity", &abi.Request{Handler: "s", Kind: abi.KindStartup, Activity: abi.KindStartup, Retry: 1, Started: started, Runtime: 0.5}},
		{"subhandlers", &abi.Request{Handler: "p", Kind: abi.KindCreate, Activity: "", Subhandlers: []abi.SubhandlerState{
			{ID: "p/a", Retry: 2, Started: started, Runtime: 1.5, Sleeping: true}, {ID: "p/b<", Finished: true}}}},
		{"negative retry and tiny runtime", &abi.Request{Handler: "h", Kind: abi.KindCreate, Retry: -2, Runtime: 1e-9}},
		{"log level", &abi.Request{Handler: "h", Kind: abi.KindCreate, Activity: abi.KindStartup, LogLevel: abi.LogWarn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendRequest(nil, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if want := referenceEncoding(t, tt.req); !bytes.Equal(got, want) {
				t.Errorf("appendRequest:\n%s\nencoding/json:\n%s", got, want)
			}
		})
	}
}

// FuzzAppendRequest holds appendRequest to encoding/json's bytes for
// arbitrary strings and JSON values.
func FuzzAppendRequest(f *testing.F) {
	f.Add("h", "create", "ns", `{"a":1}`, `"x"`, 2, 1.5, "MODIFIED")
	f.Add("\u2028\xff\"", "", "<&>", `[1,2,{"b":null}]`, `null`, 0, 0.0, "")
	f.Fuzz(func(t *testing.T, handler, reason, ns, bodyJSON, oldJSON string, retry int, runtime float64, eventType string) {
		var bodyV, oldV any
		if json.Unmarshal([]byte(bodyJSON), &bodyV) != nil || json.Unmarshal([]byte(oldJSON), &oldV) != nil {
			return
		}
		if runtime != runtime || runtime > 1e300 || runtime < -1e300 { // NaN and infinities do not encode
			return
		}
		body, old := raw(t, bodyV), raw(t, oldV)
		req := &abi.Request{Handler: handler, Kind: abi.KindField, Reason: abi.Reason(reason), Namespace: ns, Body: body, Old: old,
			Resource: &abi.ResourceRef{Group: reason, Version: eventType, Plural: ns, Kind: handler, Namespaced: retry%2 == 0},
			Retry:    retry, Runtime: runtime, Memo: body, Indices: map[string]json.RawMessage{handler: old},
			Event: &abi.WatchEvent{Type: eventType, Object: body}}
		got, err := appendRequest(nil, req)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceEncoding(t, req); !bytes.Equal(got, want) {
			t.Errorf("appendRequest:\n%s\nencoding/json:\n%s", got, want)
		}
	})
}

// TestGuestLogLevel: the request carries the lowest level the runtime's
// logger writes, unless the caller set one; nothing at debug, where every
// record is written.
func TestGuestLogLevel(t *testing.T) {
	tests := []struct {
		logger slog.Level
		set    abi.LogLevel
		want   string
	}{
		{slog.LevelDebug, "", ``},
		{slog.LevelDebug - 4, "", ``},
		{slog.LevelInfo, "", `,"logLevel":"info"}`},
		{slog.LevelWarn, "", `,"logLevel":"warning"}`},
		{slog.LevelWarn + 2, "", `,"logLevel":"error"}`},
		{slog.LevelError, "", `,"logLevel":"error"}`},
		{slog.LevelError + 4, "", `,"logLevel":"error"}`},
		{slog.LevelWarn, abi.LogInfo, `,"logLevel":"info"}`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/%q", tt.logger, tt.set), func(t *testing.T) {
			r := &Runtime{opts: Options{Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: tt.logger}))}}
			req := &abi.Request{Handler: "h", Kind: abi.KindCreate, LogLevel: tt.set}
			got, err := encodeRequest(&instance{}, req, r.guestLogLevel(t.Context()))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && bytes.Contains(got, []byte("logLevel")) || tt.want != "" && !bytes.HasSuffix(got, []byte(tt.want)) {
				t.Errorf("request %s, want it to end with %q", got, tt.want)
			}
			if req.LogLevel != tt.set {
				t.Errorf("the caller's request changed: logLevel %q", req.LogLevel)
			}
		})
	}
}
