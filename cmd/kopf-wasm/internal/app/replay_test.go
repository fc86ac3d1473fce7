package app

import (
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// replay prints nothing but its summary for an unchanged module (exit 0),
// one block per changed call for a changed one (exit 1), and exits 2 on
// bad input.
func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "calls.jsonl")
	s := offlineSettings()
	s.Recording.Path = rec
	v1 := wasmtest.Path(t, "testguests/reloadv1")
	for _, obj := range []string{
		`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"plain","namespace":"default"}}`,
		`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"gold","namespace":"default","labels":{"tier":"gold"}}}`,
	} {
		if _, _, err := host.Invoke(t.Context(), host.Invocation{Module: v1, Handler: "create_fn", Object: []byte(obj), Settings: s,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); err != nil {
			t.Fatal(err)
		}
	}

	r := run(t.Context(), "", "replay", rec, "--module", v1, "-q")
	if r.code != 0 || !strings.Contains(r.out, "2 calls replayed: 0 changed, 2 unchanged") || strings.Contains(r.out, "Line ") {
		t.Errorf("replay against the same module: %+v", r)
	}
	r = run(t.Context(), "", "replay", rec, "--module", wasmtest.Path(t, "testguests/replaychanged"), "-q")
	want := "\nLine 2: create_fn (create) kopfexamples default/gold\n  patch:\n" +
		`    recorded: {"metadata":{"annotations":{"create-runs":"1"}}}` + "\n" +
		`    replayed: {"metadata":{"annotations":{"create-runs":"1","tier-checked":"yes"}}}` + "\n" +
		"\n2 calls replayed: 1 changed, 1 unchanged\n"
	if r.code != 1 || !strings.HasSuffix(r.out, want) || strings.Contains(r.out, "Line 1") || !strings.Contains(r.errOut, "replay: 1 of 2 calls changed") {
		t.Errorf("replay against a changed module: %+v\nwant the output to end with:\n%s", r, want)
	}
	r = run(t.Context(), "", "replay", rec, "--module", wasmtest.Path(t, "testguests/reloadv2"), "-o", "json", "-q")
	var rep host.ReplayReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || r.code != 1 || rep.Changed() != 2 || rep.Calls[0].Changes[0].What != "result" {
		t.Errorf("replay -o json: %+v (%v)", r, err)
	}

	for _, tt := range []struct{ name, rec, mod, msg string }{
		{"no recording", filepath.Join(dir, "missing.jsonl"), v1, "missing.jsonl"},
		{"not a recording", writeFile(t, dir, "garbage.jsonl", "not json\n"), v1, "line 1 is not a recorded call"},
		{"no module", rec, "", "pass --module FILE"},
	} {
		args := []string{"replay", tt.rec, "-q"}
		if tt.mod != "" {
			args = append(args, "--module", tt.mod)
		}
		if r := run(t.Context(), "", args...); r.code != 2 || !strings.Contains(r.errOut, tt.msg) {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
}

// render prints the due handlers' outcomes, results and patches of each
// object (none for an object no handler serves), and --record writes the
// baseline that replay compares a changed module with.
func TestRenderCommand(t *testing.T) {
	dir := t.TempDir()
	objs := writeFile(t, dir, "objs.yaml", `apiVersion: kopf.dev/v1
kind: KopfExample
metadata: {name: gold, namespace: default, labels: {tier: gold}}
---
apiVersion: v1
kind: List
items:
- apiVersion: kopf.dev/v1
  kind: KopfExample
  metadata: {name: plain, namespace: default, annotations: {create-runs: "4"}}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cm, namespace: default}
`)
	rec := filepath.Join(dir, "base.jsonl")
	v1 := wasmtest.Path(t, "testguests/reloadv1")
	r := run(t.Context(), "", "render", "--module", v1, objs, "--record", rec, "-q")
	want := `KopfExample default/gold:
  create_fn (create):
    Outcome:  success
    Result:   {"version":"v1"}
    Patch:    {"metadata":{"annotations":{"create-runs":"1"}}}

KopfExample default/plain:
  create_fn (create):
    Outcome:  success
    Result:   {"version":"v1"}
    Patch:    {"metadata":{"annotations":{"create-runs":"5"}}}

ConfigMap default/cm:
  (no handler is due)
`
	if r.code != 0 || r.out != want {
		t.Errorf("render: %+v\nwant:\n%s", r, want)
	}
	r = run(t.Context(), "", "replay", rec, "--module", wasmtest.Path(t, "testguests/replaychanged"), "-q")
	if r.code != 1 || !strings.Contains(r.out, "Line 1: create_fn (create) kopfexamples default/gold\n  patch:") ||
		!strings.Contains(r.out, "2 calls replayed: 1 changed, 1 unchanged") {
		t.Errorf("replay of a render: %+v", r)
	}
	if r := run(t.Context(), "", "render", objs, "-q"); r.code != 2 || !strings.Contains(r.errOut, "pass --module FILE") {
		t.Errorf("render without a module: %+v", r)
	}
}
