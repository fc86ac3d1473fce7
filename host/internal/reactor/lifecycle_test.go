package reactor

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// levelRecorder keeps every record as "LEVEL message".
type levelRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *levelRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *levelRecorder) WithGroup(string) slog.Handler            { return r }
func (r *levelRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, rec.Level.String()+" "+rec.Message)
	return nil
}

// take returns the lines recorded since the last take.
func (r *levelRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

// Kopf's lifecycle lines, with its words and levels, at the moments Kopf
// logs them: the finalizer added and removed, each cause in progress (the
// body, and the diff of an update), a change that is not essential, a
// deletion that is not ours to handle, and the end of every cycle that
// handled the object with nothing left to do.
func TestCycleLogsKopfsLifecycleLines(t *testing.T) {
	f := newCycleFixture(t, spec("create_fn", abi.KindCreate, abi.Options{}), spec("delete_fn", abi.KindDelete, abi.Options{}))
	logs := &levelRecorder{}
	f.op.log = slog.New(logs)
	setSpec := func(v float64) {
		f.store.mu.Lock()
		defer f.store.mu.Unlock()
		objects.Set(f.store.obj, objects.Path{"spec", "x"}, v)
	}
	steps := []struct {
		name   string
		change func()
		want   []string // prefixes of the lines, in order
	}{
		{"a new object", nil, []string{"DEBUG Adding the finalizer, thus preventing the actual deletion."}},
		{"its creation", nil, []string{
			`DEBUG Creation is in progress: {"apiVersion":"kopf.dev/v1"`,
			"INFO Creation is processed: 1 succeeded; 0 failed.",
			"DEBUG Handling cycle is finished, waiting for new changes.",
		}},
		{"an essential change", func() { setSpec(2) }, []string{
			`DEBUG Updating is in progress: {"apiVersion":"kopf.dev/v1"`,
			`DEBUG Updating diff: [{"op":"change","field":["spec","x"],"old":1,"new":2}]`,
			"DEBUG Handling cycle is finished, waiting for new changes.",
		}},
		{"nothing essential", nil, []string{
			"DEBUG Something has changed, but we are not interested (the essence is the same).",
			"DEBUG Handling cycle is finished, waiting for new changes.",
		}},
		{"the deletion", func() {
			f.store.mu.Lock()
			defer f.store.mu.Unlock()
			objects.Set(f.store.obj, objects.Path{"metadata", "deletionTimestamp"}, "2026-01-01T00:00:00Z")
		}, []string{
			`DEBUG Deletion is in progress: {"apiVersion":"kopf.dev/v1"`,
			"INFO Deletion is processed: 1 succeeded; 0 failed.",
			"DEBUG Removing the finalizer, thus allowing the actual deletion.",
			"DEBUG Handling cycle is finished, waiting for new changes.",
		}},
		{"released, not yet gone", nil, []string{
			"DEBUG Deletion, but we are done with it, and we do not care.",
			"DEBUG Handling cycle is finished, waiting for new changes.",
		}},
	}
	for _, step := range steps {
		if step.change != nil {
			step.change()
		}
		f.cycle(t)
		got := logs.take()
		if len(got) != len(step.want) {
			t.Errorf("%s: logged %q, want %q", step.name, got, step.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], step.want[i]) {
				t.Errorf("%s: line %d is %q, want it to begin %q", step.name, i, got[i], step.want[i])
			}
		}
	}
}

// A finalizer no handler needs any more is removed with Kopf's line.
func TestCycleLogsFinalizerNoLongerNeeded(t *testing.T) {
	f := newCycleFixture(t, spec("create_fn", abi.KindCreate, abi.Options{}))
	logs := &levelRecorder{}
	f.op.log = slog.New(logs)
	f.store.mu.Lock()
	objects.Set(f.store.obj, objects.Path{"metadata", "finalizers"}, []any{"kopf.zalando.org/KopfFinalizerMarker"})
	f.store.mu.Unlock()
	f.cycle(t)
	if got := logs.take(); len(got) == 0 || got[0] != "DEBUG Removing the finalizer, as there are no handlers requiring it." {
		t.Errorf("logged %q, want the finalizer's removal first", got)
	}
}
