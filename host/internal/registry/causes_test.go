package registry

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

func TestDetectCause(t *testing.T) {
	const (
		live        = `{"metadata":{"name":"x"},"spec":{"a":1}}`
		deleting    = `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["kopf.zalando.org/KopfFinalizerMarker"]}}`
		deletedFree = `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["other/x"]}}`
		essence     = `{"spec":{"a":1}}`
		changed     = `{"spec":{"a":2}}`
	)
	tests := []struct {
		name        string
		event       string
		body        string
		old, new    string
		initial     bool
		want        abi.Reason
		wantInitial bool
		diffLen     int
	}{
		{"deleted event is gone", "DELETED", deleting, essence, essence, false, ReasonGone, false, 0},
		{"deleting without our finalizer is free", "MODIFIED", deletedFree, essence, essence, false, ReasonFree, false, 0},
		{"deleting with our finalizer is delete", "MODIFIED", deleting, essence, essence, true, abi.ReasonDelete, true, 0},
		{"no diff-base is create", "ADDED", live, "", essence, false, abi.ReasonCreate, false, 1},
		{"create never mixes with resume", "", live, "", essence, true, abi.ReasonCreate, false, 1},
		{"initial and unchanged is resume", "", live, essence, essence, true, abi.ReasonResume, true, 0},
		{"unchanged is noop", "MODIFIED", live, essence, essence, false, ReasonNoop, false, 0},
		{"changed is update", "MODIFIED", live, essence, changed, false, abi.ReasonUpdate, false, 1},
		{"initial and changed is update with resume mixed in", "", live, essence, changed, true, abi.ReasonUpdate, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DetectCause(CauseInput{
				EventType: tt.event, Body: decode(t, tt.body), Finalizer: finalizer,
				Old: decode(t, tt.old), New: decode(t, tt.new), Initial: tt.initial,
			})
			if c.Reason != tt.want || c.Initial != tt.wantInitial || len(c.Diff) != tt.diffLen {
				t.Errorf("got reason=%s initial=%v diff=%v", c.Reason, c.Initial, c.Diff)
			}
		})
	}
}

func TestCreateDiffIsOneRootAdd(t *testing.T) {
	c := DetectCause(CauseInput{Body: decode(t, `{}`), New: decode(t, `{"spec":{"a":1}}`)})
	if len(c.Diff) != 1 || c.Diff[0].Op != abi.DiffAdd || len(c.Diff[0].Field) != 0 {
		t.Errorf("diff = %#v", c.Diff)
	}
}

// A diff-base stored only as a digest, with another essence now: an
// update (never a create), whose diff is one change of the whole object
// from null; a field handler sees its field added.
func TestUnknownOldIsUpdate(t *testing.T) {
	r := mustNew(t, manifest("m",
		spec("fn/spec.field", abi.KindField, "kopfexamples", func(s *abi.HandlerSpec) { s.Filters.Field = "spec.field" }),
		spec("fn/spec.absent", abi.KindField, "kopfexamples", func(s *abi.HandlerSpec) { s.Filters.Field = "spec.absent" }),
		spec("whole", abi.KindUpdate, "kopfexamples", nil),
	))
	for _, initial := range []bool{false, true} {
		c := DetectCause(CauseInput{Body: decode(t, `{}`), OldUnknown: true, New: decode(t, `{"spec":{"field":{"x":2}}}`), Initial: initial})
		if c.Reason != abi.ReasonUpdate || c.Initial != initial || len(c.Diff) != 1 || c.Diff[0].Op != abi.DiffChange ||
			len(c.Diff[0].Field) != 0 || c.Diff[0].Old != nil || !equalJSON(c.Diff[0].New, `{"spec":{"field":{"x":2}}}`) {
			t.Fatalf("initial=%v: reason=%s initial=%v diff=%#v", initial, c.Reason, c.Initial, c.Diff)
		}
		hs := r.Handlers(kopfExamples)
		old, new, diff := c.ForHandler(hs[0])
		if old != nil || !equalJSON(new, `{"x":2}`) || len(diff) != 1 || diff[0].Op != abi.DiffAdd || len(diff[0].Field) != 0 {
			t.Errorf("field handler: old=%v new=%v diff=%#v", old, new, diff)
		}
		if _, _, diff := c.ForHandler(hs[1]); len(diff) != 0 {
			t.Errorf("absent field: diff=%#v, want none", diff)
		}
		if old, _, diff := c.ForHandler(hs[2]); old != nil || len(diff) != 1 {
			t.Errorf("whole-object handler: old=%#v diff=%#v", old, diff)
		}
	}
}

func TestForHandler(t *testing.T) {
	r := mustNew(t, manifest("m",
		spec("fn/spec.field", abi.KindField, "kopfexamples", func(s *abi.HandlerSpec) { s.Filters.Field = "spec.field" }),
		spec("whole", abi.KindUpdate, "kopfexamples", nil),
	))
	c := DetectCause(CauseInput{
		Body: decode(t, `{}`), Old: decode(t, `{"spec":{"field":{"x":1},"other":1}}`), New: decode(t, `{"spec":{"field":{"x":2},"other":2}}`),
	})
	hs := r.Handlers(kopfExamples)
	old, new, diff := c.ForHandler(hs[0])
	if !equalJSON(old, `{"x":1}`) || !equalJSON(new, `{"x":2}`) || len(diff) != 1 || diff[0].Field.String() != "x" {
		t.Errorf("field handler: old=%v new=%v diff=%v", old, new, diff)
	}
	old, new, diff = c.ForHandler(hs[1])
	if !equalJSON(old, `{"spec":{"field":{"x":1},"other":1}}`) || new == nil || len(diff) != 2 {
		t.Errorf("whole-object handler: old=%v new=%v diff=%v", old, new, diff)
	}
	create := DetectCause(CauseInput{Body: decode(t, `{}`), New: decode(t, `{"spec":{}}`)})
	if old, _, _ := create.ForHandler(hs[1]); old != nil {
		t.Errorf("create old = %#v, want untyped nil", old)
	}
}
