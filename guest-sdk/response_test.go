package kopf

import (
	"encoding/json"
	"log/slog"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func ptr[T any](v T) *T { return &v }

var responses = map[string]*abi.Response{
	"empty":   {},
	"success": {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`{"message":"hello world"}`)},
	"scalar":  {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`3`)},
	"null":    {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`null`)},
	"delay0":  {Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "later", Delay: ptr(0.0)}},
	"delay":   {Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "later", Delay: ptr(1.5)}},
	"tiny":    {Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Delay: ptr(1e-7)}},
	"huge":    {Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Delay: ptr(1e21)}},
	"perm":    {Outcome: abi.Outcome{Status: abi.OutcomePermanent, Message: "no way"}},
	"error": {Outcome: abi.Outcome{Status: abi.OutcomeError,
		Message: "a \"quoted\" <b>bold</b> & más 日本 \u2028\n\t\x01 \xff"}},
	"patch": {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Patch: &abi.Patch{
		Merge: json.RawMessage(`{"metadata":{"labels":{"a":"b"}}}`),
		JSON: []abi.JSONPatchOp{
			{Op: "add", Path: "/spec/items/-", Value: json.RawMessage(`{"x":1}`)},
			{Op: "remove", Path: "/spec/old"},
			{Op: "move", Path: "/spec/b", From: "/spec/a"},
			{Op: "test", Path: "/spec/n", Value: json.RawMessage(`null`)},
		}}},
	"mergeonly":  {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Patch: &abi.Patch{Merge: json.RawMessage(`{"a":null}`)}},
	"opsonly":    {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Patch: &abi.Patch{JSON: []abi.JSONPatchOp{{Op: "replace", Path: "/a~1b", Value: json.RawMessage(`"v"`)}}}},
	"emptypatch": {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Patch: &abi.Patch{JSON: []abi.JSONPatchOp{}}},
	"memo":       {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Memo: json.RawMessage(`{"count":2,"list":[1,"a"]}`)},
	"admission": {Outcome: abi.Outcome{Status: abi.OutcomeError, Message: "denied", Code: 403},
		Admission: &abi.AdmissionResponse{Allowed: false, Code: 403, Message: "denied <now>", Warnings: []string{"w1", "w\"2\""}}},
	"allowed":     {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Admission: &abi.AdmissionResponse{Allowed: true, Warnings: []string{}}},
	"matched":     {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Matched: ptr(true)},
	"not matched": {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Matched: ptr(false)},
	// Raw members json.Marshal would change: the whole response goes there.
	"spaced":  {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(` { "a" : 1 } `)},
	"html":    {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Memo: json.RawMessage(`{"a":"<b>"}`)},
	"rawop":   {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Patch: &abi.Patch{JSON: []abi.JSONPatchOp{{Op: "add", Path: "/a", Value: json.RawMessage("\"\u2028\"")}}}},
	"rawmrg":  {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Patch: &abi.Patch{Merge: json.RawMessage("[1, 2]")}},
	"invalid": {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`{"a":`)},
	"nan":     {Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Delay: ptr(math.NaN())}},
}

// slowResponses are the responses that encodeResponse leaves to
// json.Marshal.
var slowResponses = map[string]bool{"spaced": true, "html": true, "rawop": true, "rawmrg": true, "invalid": true, "nan": true}

func TestEncodeResponseMatchesMarshal(t *testing.T) {
	for name, resp := range responses {
		want, werr := json.Marshal(resp)
		got, err := encodeResponse(resp)
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("%s: encodeResponse = %s, %v\n json.Marshal = %s, %v", name, got, err, want, werr)
		}
		if _, ok := appendResponse(nil, resp); ok == slowResponses[name] {
			t.Errorf("%s: appendResponse ok = %v, want %v", name, ok, !ok)
		}
	}
}

func TestLogRecordMatchesMarshal(t *testing.T) {
	type point struct{ X, Y int }
	for _, fields := range []map[string]any{
		nil, {}, {"name": "kopf-example-1", "n": int64(3), "u": uint64(4), "f": 1.5, "ok": true},
		{"spec": Object{"field": "<value>", "items": []any{1.0, "two"}}, "labels": map[string]string{"a": "b"}},
		{"when": time.Unix(0, 0).UTC(), "point": point{1, 2}}, // encoding/json's
	} {
		rec := abi.LogRecord{Level: abi.LogWarn, Message: "a \"message\" & <more>", Fields: fields}
		want, _ := json.Marshal(rec)
		got, ok := appendLogRecord(nil, &rec)
		if ok && string(got) != string(want) {
			t.Errorf("appendLogRecord(%v)\n got %s\nwant %s", fields, got, want)
		}
		h := &recorder{}
		c := &Context{host: h}
		var args []any
		for k, v := range fields {
			args = append(args, k, v)
		}
		c.Logger().Warn(rec.Message, args...)
		if len(h.calls) != 1 || string(h.calls[0].request) != string(want) {
			t.Errorf("logged %v, want %s", h.calls, want)
		}
	}
}

func TestLogGroupsAndErrors(t *testing.T) {
	h := &recorder{}
	c := &Context{host: h}
	c.Logger().WithGroup("g").With("a", 1).Error("failed", "err", errSyntax, slog.Duration("d", time.Second), "nan", math.NaN())
	want := `{"level":"error","message":"failed","fields":{"fields":"map[g:map[a:1 d:1s err:malformed JSON nan:NaN]]"}}`
	if len(h.calls) != 1 || string(h.calls[0].request) != want {
		t.Errorf("logged %v, want %s", h.calls, want)
	}
}

// TestDecodeIntoMatchesUnmarshal: each target of decodeInto holds what
// json.Unmarshal stores, for fast-path and fallback inputs.
func TestDecodeIntoMatchesUnmarshal(t *testing.T) {
	for _, in := range []string{
		`null`, `{}`, `{"a":{"b":[1,"x",null]},"a":2}`, `[1,2]`, `"s"`, `1.5`, `true`, ``, `{`,
		`{"big":1e400,"ok":1}`, `{"i":[1,{"x":"y"}],"n":null}`, `{"i":[1],"s":"x"}`, "\"\xff\\ud800\"",
	} {
		raw := []byte(in)
		compare(t, in, raw, new(any), new(any))
		compare(t, in, raw, new(Object), new(Object))
		compare(t, in, raw, new(Memo), new(Memo))
		compare(t, in, raw, new(map[string][]any), new(map[string][]any))
	}
}

func compare[T any](t *testing.T, in string, raw []byte, got, want *T) {
	t.Helper()
	decodeInto(raw, got)
	_ = json.Unmarshal(raw, want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decodeInto(%q, %T) = %#v, json.Unmarshal gives %#v", in, got, *got, *want)
	}
}

// TestObjectAttrTakesFastPath: an Object attribute (ctx.Spec() and the
// like) is logged without encoding/json's reflection.
func TestObjectAttrTakesFastPath(t *testing.T) {
	fields := map[string]any{}
	putAttr(fields, slog.Any("spec", Object{"field": "value", "n": 1.0}))
	rec := abi.LogRecord{Level: abi.LogInfo, Message: "m", Fields: fields}
	got, ok := appendLogRecord(nil, &rec)
	if !ok {
		t.Fatal("an Object attribute fell back to encoding/json")
	}
	if want := `{"level":"info","message":"m","fields":{"spec":{"field":"value","n":1}}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
