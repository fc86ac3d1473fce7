package offline

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// recordRun records the create handler of reloadv1 on each object, through
// Invoke with recording.path set (the execution layer's recorder), and
// returns the recording's path.
func recordRun(t *testing.T, objects ...map[string]any) string {
	t.Helper()
	s := settings.Default()
	s.Wasm.CacheDir = t.TempDir()
	s.Recording.Path = filepath.Join(t.TempDir(), "calls.jsonl")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	now := func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }
	for _, obj := range objects {
		raw, _ := json.Marshal(obj)
		_, _, err := Invoke(context.Background(), Call{Module: wasmtest.Path(t, "testguests/reloadv1"), Handler: "create_fn",
			Object: raw, Settings: &s, Logger: log, Now: now})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s.Recording.Path
}

func example(name string, labels map[string]any) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name, "namespace": "default", "uid": "uid-" + name, "labels": labels},
		"spec":     map[string]any{"field": "x"}}
}

// A recorded run replayed against the same module changes nothing; against
// reloadv2 exactly every result; against replaychanged exactly the patch
// of the tier=gold object.
func TestReplay(t *testing.T) {
	rec := recordRun(t, example("plain", nil), example("gold", map[string]any{"tier": "gold"}), example("silver", map[string]any{"tier": "silver"}))
	tests := []struct {
		module string
		want   map[int][]Change // by line
	}{
		{"testguests/reloadv1", map[int][]Change{}},
		{"testguests/reloadv2", map[int][]Change{
			1: {{What: "result", Recorded: `{"version":"v1"}`, Replayed: `{"version":"v2"}`}},
			2: {{What: "result", Recorded: `{"version":"v1"}`, Replayed: `{"version":"v2"}`}},
			3: {{What: "result", Recorded: `{"version":"v1"}`, Replayed: `{"version":"v2"}`}},
		}},
		{"testguests/replaychanged", map[int][]Change{
			2: {{What: "patch", Recorded: `{"metadata":{"annotations":{"create-runs":"1"}}}`,
				Replayed: `{"metadata":{"annotations":{"create-runs":"1","tier-checked":"yes"}}}`}},
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.module), func(t *testing.T) {
			s := settings.Default()
			s.Wasm.CacheDir = t.TempDir()
			rep, err := Replay(context.Background(), ReplayCall{Recording: rec, Module: wasmtest.Path(t, tt.module), Settings: &s,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Calls) != 3 {
				t.Fatalf("%d calls replayed, want 3", len(rep.Calls))
			}
			got := map[int][]Change{}
			for _, c := range rep.Calls {
				if len(c.Unrecorded) > 0 {
					t.Errorf("line %d: host calls not in the recording: %v", c.Line, c.Unrecorded)
				}
				if len(c.Changes) > 0 {
					got[c.Line] = c.Changes
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes:\n got %+v\nwant %+v", got, tt.want)
			}
			if rep.Changed() != len(tt.want) {
				t.Errorf("Changed() = %d, want %d", rep.Changed(), len(tt.want))
			}
		})
	}
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.jsonl")
	other := filepath.Join(dir, "other.jsonl")
	_ = os.WriteFile(garbage, []byte("not json\n"), 0o600)
	_ = os.WriteFile(other, []byte(`{"module":"someone-else","request":{"handler":"h","kind":"create"}}`+"\n"), 0o600)
	s := settings.Default()
	s.Wasm.CacheDir = t.TempDir()
	mod := wasmtest.Path(t, "testguests/reloadv1")
	for _, tt := range []struct{ name, rec, mod string }{
		{"no recording", filepath.Join(dir, "missing.jsonl"), mod},
		{"not a recording", garbage, mod},
		{"no call of the module", other, mod},
		{"not a module", other, garbage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Replay(context.Background(), ReplayCall{Recording: tt.rec, Module: tt.mod, Settings: &s,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("err = %v, want an ErrBadInput", err)
			}
		})
	}
}

// A replay answers the module's Kubernetes requests from the record: the
// same module replays unchanged with no call of its own; with the host
// calls taken out of the record, each request is answered with an error
// that says so and is listed.
func TestReplayHostCalls(t *testing.T) {
	s := settings.Default()
	s.Wasm.CacheDir = t.TempDir()
	s.Recording.Path = filepath.Join(t.TempDir(), "calls.jsonl")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mod := wasmtest.Path(t, "05-database")
	db := map[string]any{"apiVersion": "demo.kopf.dev/v1", "kind": "Database",
		"metadata": map[string]any{"name": "db1", "namespace": "default"}, "spec": map[string]any{"engine": "postgres", "replicas": 2}}
	raw, _ := json.Marshal(db)
	stored := []map[string]any{
		{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "db1", "namespace": "default"}},
		{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db1-db", "namespace": "default"}, "spec": map[string]any{"replicas": 2}},
	}
	if _, _, err := Invoke(context.Background(), Call{Module: mod, Handler: "reconcile", Object: raw, Settings: &s, Logger: log, Objects: stored}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Recording.Path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil || rec["hostCalls"] == nil {
		t.Fatalf("the recording holds no host calls: %s (%v)", data, err)
	}

	replay := func(path string) ReplayReport {
		t.Helper()
		rep, err := Replay(context.Background(), ReplayCall{Recording: path, Module: mod, Settings: &s, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := replay(s.Recording.Path); rep.Changed() != 0 {
		t.Errorf("replay against the same module: %+v", rep.Calls)
	}
	delete(rec, "hostCalls")
	stripped, _ := json.Marshal(rec)
	path := filepath.Join(t.TempDir(), "stripped.jsonl")
	if err := os.WriteFile(path, append(stripped, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := replay(path)
	if rep.Changed() != 1 || len(rep.Calls[0].Unrecorded) == 0 || !strings.HasPrefix(rep.Calls[0].Unrecorded[0], "get ") {
		t.Errorf("replay without the host calls: %+v", rep.Calls)
	}
}
