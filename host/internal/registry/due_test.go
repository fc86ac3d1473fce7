package registry

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func str(s string) *string { return &s }

func lit(v string) *abi.ValueFilter { return &abi.ValueFilter{Value: json.RawMessage(v)} }

var (
	present  = &abi.ValueFilter{Present: true}
	callback = &abi.ValueFilter{Callback: true}
	absent   = &abi.ValueFilter{Absent: true}
)

func onField(field string, value, old, new *abi.ValueFilter) func(*abi.HandlerSpec) {
	return func(s *abi.HandlerSpec) {
		s.Filters.Field, s.Filters.Value, s.Filters.Old, s.Filters.New = field, value, old, new
	}
}

// The handlers of a typical operator, in registration order.
func kopfRegistry(t *testing.T) *Registry {
	return mustNew(t, manifest("m",
		spec("create_fn", abi.KindCreate, "kopfexamples", nil),
		spec("update_fn", abi.KindUpdate, "kopfexamples", nil),
		spec("delete_fn", abi.KindDelete, "kopfexamples", nil),
		spec("resume_fn", abi.KindResume, "kopfexamples", nil),
		spec("resume_deleted", abi.KindResume, "kopfexamples", func(s *abi.HandlerSpec) { s.Options.Deleted = true }),
		spec("field_fn/spec.field", abi.KindField, "kopfexamples", onField("spec.field", nil, nil, nil)),
	))
}

func cause(t *testing.T, reason abi.Reason, initial bool, body, old, new string) *Cause {
	c := &Cause{Reason: reason, Initial: initial, Body: decode(t, body), Old: decode(t, old), New: decode(t, new)}
	return c
}

func TestDueByCause(t *testing.T) {
	const (
		live     = `{"metadata":{}}`
		deleting = `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"}}`
	)
	tests := []struct {
		name  string
		cause *Cause
		want  []string
	}{
		{"create with the field set", cause(t, abi.ReasonCreate, false, live, ``, `{"spec":{"field":"v"}}`), []string{"create_fn", "field_fn/spec.field"}},
		{"create without the field", cause(t, abi.ReasonCreate, false, live, ``, `{"spec":{}}`), []string{"create_fn"}},
		{"update of the field", cause(t, abi.ReasonUpdate, false, live, `{"spec":{"field":"a"}}`, `{"spec":{"field":"b"}}`), []string{"update_fn", "field_fn/spec.field"}},
		{"update of another field", cause(t, abi.ReasonUpdate, false, live, `{"spec":{"field":"a","x":1}}`, `{"spec":{"field":"a","x":2}}`), []string{"update_fn"}},
		{"update of an initial object mixes resume in", cause(t, abi.ReasonUpdate, true, live, `{"spec":{"x":1}}`, `{"spec":{"x":2}}`), []string{"update_fn", "resume_fn", "resume_deleted"}},
		{"resume", cause(t, abi.ReasonResume, true, live, `{"spec":{"field":"a"}}`, `{"spec":{"field":"a"}}`), []string{"resume_fn", "resume_deleted"}},
		{"delete", cause(t, abi.ReasonDelete, false, deleting, `{"spec":{"field":"a"}}`, `{"spec":{"field":"a"}}`), []string{"delete_fn"}},
		{"delete with the field changed since the last handling: no field handler",
			cause(t, abi.ReasonDelete, false, deleting, `{"spec":{"field":"a"}}`, `{"spec":{"field":"b"}}`), []string{"delete_fn"}},
		{"delete of an initial object: resume only with deleted", cause(t, abi.ReasonDelete, true, deleting, `{"spec":{}}`, `{"spec":{}}`), []string{"delete_fn", "resume_deleted"}},
		{"field removed on update", cause(t, abi.ReasonUpdate, false, live, `{"spec":{"field":"a"}}`, `{"spec":{}}`), []string{"update_fn", "field_fn/spec.field"}},
		{"noop", cause(t, ReasonNoop, true, live, `{}`, `{}`), nil},
		{"free", cause(t, ReasonFree, false, deleting, `{}`, `{}`), nil},
		{"gone", cause(t, ReasonGone, false, live, `{}`, `{}`), nil},
	}
	r := kopfRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, err := r.Due(kopfExamples, tt.cause, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := IDs(due); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("due = %v, want %v", got, tt.want)
			}
		})
	}
}

// Kopf's filter semantics, one handler at a time.
func TestFilters(t *testing.T) {
	body := `{"metadata":{"labels":{"app":"web","empty":""},"annotations":{"note":"x"}}}`
	tests := []struct {
		name   string
		kind   abi.HandlerKind
		change func(*abi.HandlerSpec)
		cause  *Cause
		want   bool
	}{
		{"label value", abi.KindCreate, func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("web")}} },
			cause(t, abi.ReasonCreate, false, body, ``, `{}`), true},
		{"label other value", abi.KindCreate, func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("db")}} },
			cause(t, abi.ReasonCreate, false, body, ``, `{}`), false},
		{"empty label counts as present", abi.KindCreate, func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"empty": {Present: true}} },
			cause(t, abi.ReasonCreate, false, body, ``, `{}`), true},
		{"label absent", abi.KindCreate, func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"zzz": {Absent: true}} },
			cause(t, abi.ReasonCreate, false, body, ``, `{}`), true},
		{"label absent but present", abi.KindCreate, func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"app": {Absent: true}} },
			cause(t, abi.ReasonCreate, false, body, ``, `{}`), false},
		{"all filters are ANDed", abi.KindCreate, func(s *abi.HandlerSpec) {
			s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("web")}}
			s.Filters.Annotations = map[string]abi.MetaFilter{"note": {Value: str("y")}}
		}, cause(t, abi.ReasonCreate, false, body, ``, `{}`), false},
		{"annotation present", abi.KindCreate, func(s *abi.HandlerSpec) { s.Filters.Annotations = map[string]abi.MetaFilter{"note": {Present: true}} },
			cause(t, abi.ReasonCreate, false, body, ``, `{}`), true},
		{"field without value: present in new", abi.KindCreate, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonCreate, false, body, ``, `{"spec":{"x":1}}`), true},
		{"field without value: absent", abi.KindCreate, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonCreate, false, body, ``, `{"spec":{}}`), false},
		{"field without value: present in old only (update)", abi.KindUpdate, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":1}}`, `{"spec":{}}`), true},
		{"value matches old or new", abi.KindUpdate, onField("spec.x", lit(`1`), nil, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":1}}`, `{"spec":{"x":2}}`), true},
		{"value matches neither", abi.KindUpdate, onField("spec.x", lit(`3`), nil, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":1}}`, `{"spec":{"x":2}}`), false},
		{"value absent in one", abi.KindField, onField("spec.x", absent, nil, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{}}`, `{"spec":{"x":2}}`), true},
		{"value structured literal", abi.KindCreate, onField("spec.x", lit(`{"a":[1,"b"]}`), nil, nil),
			cause(t, abi.ReasonCreate, false, body, ``, `{"spec":{"x":{"a":[1.0,"b"]}}}`), true},
		{"update needs the field to change", abi.KindUpdate, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":1,"y":1}}`, `{"spec":{"x":1,"y":2}}`), false},
		{"create does not need a change", abi.KindCreate, onField("spec.x", lit(`1`), nil, nil),
			cause(t, abi.ReasonCreate, false, body, ``, `{"spec":{"x":1}}`), true},
		{"old and new", abi.KindField, onField("spec.x", nil, lit(`"a"`), lit(`"b"`)),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":"a"}}`, `{"spec":{"x":"b"}}`), true},
		{"old mismatch", abi.KindField, onField("spec.x", nil, lit(`"z"`), lit(`"b"`)),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":"a"}}`, `{"spec":{"x":"b"}}`), false},
		{"old absent, new present: appearance", abi.KindField, onField("spec.x", nil, absent, present),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{}}`, `{"spec":{"x":"b"}}`), true},
		{"old absent on a change", abi.KindField, onField("spec.x", nil, absent, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":"a"}}`, `{"spec":{"x":"b"}}`), false},
		{"field handler on create when the field appears", abi.KindField, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonCreate, false, body, ``, `{"spec":{"x":1}}`), true},
		{"field handler on resume: no change", abi.KindField, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonResume, true, body, `{"spec":{"x":1}}`, `{"spec":{"x":1}}`), false},
		{"null value is present and differs from absent", abi.KindField, onField("spec.x", nil, nil, nil),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{}}`, `{"spec":{"x":null}}`), true},
		// Callbacks are the guest's when's to decide (it gets the value or
		// null, as Kopf's callable filters): the host lets them pass.
		{"callback label on a missing key", abi.KindCreate, func(s *abi.HandlerSpec) {
			s.Filters.When = true
			s.Filters.Labels = map[string]abi.MetaFilter{"zzz": {Callback: true}}
		}, cause(t, abi.ReasonCreate, false, body, ``, `{}`), true},
		{"callback label beside a literal that fails", abi.KindCreate, func(s *abi.HandlerSpec) {
			s.Filters.When = true
			s.Filters.Labels = map[string]abi.MetaFilter{"zzz": {Callback: true}, "app": {Value: str("db")}}
		}, cause(t, abi.ReasonCreate, false, body, ``, `{}`), false},
		{"callback value on a missing field", abi.KindCreate, withWhen(onField("spec.x", callback, nil, nil)),
			cause(t, abi.ReasonCreate, false, body, ``, `{"spec":{}}`), true},
		{"callback new still needs the field to change", abi.KindUpdate, withWhen(onField("spec.x", nil, nil, callback)),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":1,"y":1}}`, `{"spec":{"x":1,"y":2}}`), false},
		{"callback old on a change", abi.KindField, withWhen(onField("spec.x", nil, callback, nil)),
			cause(t, abi.ReasonUpdate, false, body, `{"spec":{"x":"a"}}`, `{"spec":{"x":"b"}}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustNew(t, manifest("m", spec("h", tt.kind, "kopfexamples", tt.change)))
			due, err := r.Due(kopfExamples, tt.cause, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(due) == 1; got != tt.want {
				t.Errorf("due = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWhenIsAskedLast(t *testing.T) {
	r := mustNew(t, manifest("m",
		spec("a", abi.KindCreate, "kopfexamples", func(s *abi.HandlerSpec) { s.Filters.When = true }),
		spec("b", abi.KindCreate, "kopfexamples", func(s *abi.HandlerSpec) {
			s.Filters.When = true
			s.Filters.Labels = map[string]abi.MetaFilter{"app": {Present: true}}
		}),
		spec("c", abi.KindCreate, "kopfexamples", nil),
	))
	var asked []string
	when := func(h *Handler, c *Cause) (bool, error) {
		asked = append(asked, h.ID())
		return false, nil
	}
	c := cause(t, abi.ReasonCreate, false, `{}`, ``, `{}`)
	due, err := r.Due(kopfExamples, c, when)
	if err != nil {
		t.Fatal(err)
	}
	if got := IDs(due); !reflect.DeepEqual(got, []string{"c"}) || !reflect.DeepEqual(asked, []string{"a"}) {
		t.Errorf("due = %v, asked = %v", got, asked)
	}
	boom := errors.New("guest trapped")
	_, err = r.Due(kopfExamples, c, func(*Handler, *Cause) (bool, error) { return false, boom })
	var we *WhenError
	if !errors.As(err, &we) || we.Handler != "a" || !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if !r.Handlers(kopfExamples)[0].NeedsWhen() || r.Handlers(kopfExamples)[2].NeedsWhen() {
		t.Errorf("NeedsWhen is wrong")
	}
}

func TestPrematchAndFinalizer(t *testing.T) {
	labelled := func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("web")}} }
	tests := []struct {
		name      string
		handlers  []abi.HandlerSpec
		body      string
		prematch  bool
		finalizer bool
	}{
		{"create only", []abi.HandlerSpec{spec("c", abi.KindCreate, "kopfexamples", nil)}, `{}`, true, false},
		{"delete handler", []abi.HandlerSpec{spec("d", abi.KindDelete, "kopfexamples", nil)}, `{}`, true, true},
		{"optional delete handler", []abi.HandlerSpec{spec("d", abi.KindDelete, "kopfexamples", func(s *abi.HandlerSpec) { s.Options.Optional = true })}, `{}`, true, false},
		{"delete handler filtered out", []abi.HandlerSpec{spec("d", abi.KindDelete, "kopfexamples", labelled)}, `{"metadata":{"labels":{"app":"db"}}}`, false, false},
		{"stealth: nothing matches", []abi.HandlerSpec{spec("c", abi.KindCreate, "kopfexamples", labelled)}, `{}`, false, false},
		{"timer needs the finalizer", []abi.HandlerSpec{spec("t", abi.KindTimer, "kopfexamples", nil)}, `{}`, false, true},
		{"daemon filtered out", []abi.HandlerSpec{spec("d", abi.KindDaemon, "kopfexamples", labelled)}, `{}`, false, false},
		{"event handlers are not changing", []abi.HandlerSpec{spec("e", abi.KindEvent, "kopfexamples", nil)}, `{}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustNew(t, manifest("m", tt.handlers...))
			c := cause(t, abi.ReasonUpdate, false, tt.body, `{"spec":{"x":1}}`, `{"spec":{"x":2}}`)
			if got, err := r.Prematch(kopfExamples, c, nil); err != nil || got != tt.prematch {
				t.Errorf("Prematch = %v, %v", got, err)
			}
			if got, err := r.RequiresFinalizer(kopfExamples, c, nil); err != nil || got != tt.finalizer {
				t.Errorf("RequiresFinalizer = %v, %v", got, err)
			}
		})
	}
}

func TestMatching(t *testing.T) {
	r := mustNew(t, manifest("m",
		spec("ev_all", abi.KindEvent, "pods", nil),
		spec("ev_web", abi.KindEvent, "pods", func(s *abi.HandlerSpec) { s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("web")}} }),
		spec("ev_phase", abi.KindEvent, "pods", onField("status.phase", lit(`"Running"`), nil, nil)),
		spec("idx", abi.KindIndex, "pods", nil),
	))
	got, err := r.Matching(pods, abi.KindEvent, decode(t, `{"metadata":{"labels":{"app":"db"}},"status":{"phase":"Running"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids := IDs(got); !reflect.DeepEqual(ids, []string{"ev_all", "ev_phase"}) {
		t.Errorf("matching = %v", ids)
	}
}

// withWhen adds a callback filter to a spec change (callback value filters
// need one).
func withWhen(change func(*abi.HandlerSpec)) func(*abi.HandlerSpec) {
	return func(s *abi.HandlerSpec) {
		change(s)
		s.Filters.When = true
	}
}

// One function declared as several changing handlers under one id (Kopf's
// @kopf.on.resume with @kopf.on.create) runs at most once per cause: the
// first of its entries that is due, in manifest order, as Kopf
// deduplicates a cause's handlers by function and id; an entry whose
// filters fail leaves the cause to the next one.
func TestDueOneFunctionUnderSeveralKinds(t *testing.T) {
	const live = `{"metadata":{"labels":{"app":"web"}}}`
	r := mustNew(t, manifest("m",
		spec("fn", abi.KindResume, "kopfexamples", nil),
		spec("fn", abi.KindCreate, "kopfexamples", nil),
		spec("fn", abi.KindUpdate, "kopfexamples", func(s *abi.HandlerSpec) {
			s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("web")}}
		}),
		spec("other", abi.KindUpdate, "kopfexamples", nil),
		spec("picky", abi.KindResume, "kopfexamples", func(s *abi.HandlerSpec) {
			s.Filters.Labels = map[string]abi.MetaFilter{"app": {Value: str("db")}}
		}),
		spec("picky", abi.KindUpdate, "kopfexamples", nil),
	))
	tests := []struct {
		name      string
		cause     *Cause
		want      []string
		wantKinds []abi.HandlerKind
	}{
		{"create", cause(t, abi.ReasonCreate, false, live, ``, `{}`), []string{"fn"}, []abi.HandlerKind{abi.KindCreate}},
		{"resume", cause(t, abi.ReasonResume, true, live, `{}`, `{}`), []string{"fn"}, []abi.HandlerKind{abi.KindResume}},
		{"update", cause(t, abi.ReasonUpdate, false, live, `{"spec":1}`, `{"spec":2}`), []string{"fn", "other", "picky"},
			[]abi.HandlerKind{abi.KindUpdate, abi.KindUpdate, abi.KindUpdate}},
		{"update of an initial object: the first due entry runs, once", cause(t, abi.ReasonUpdate, true, live, `{"spec":1}`, `{"spec":2}`),
			[]string{"fn", "other", "picky"}, []abi.HandlerKind{abi.KindResume, abi.KindUpdate, abi.KindUpdate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, err := r.Due(kopfExamples, tt.cause, nil)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []abi.HandlerKind
			for _, h := range due {
				kinds = append(kinds, h.Kind())
			}
			if got := IDs(due); !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(kinds, tt.wantKinds) {
				t.Errorf("due = %v %v, want %v %v", got, kinds, tt.want, tt.wantKinds)
			}
		})
	}
	if got, want := r.ChangingIDs(kopfExamples), []string{"fn", "other", "picky"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ChangingIDs = %v, want %v (each id once)", got, want)
	}
}
