package registry

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

var (
	kopfExamples = abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	pods         = abi.ResourceRef{Version: "v1", Plural: "pods", Kind: "Pod", Namespaced: true}
)

func resolver(sel abi.ResourceSelector) (abi.ResourceRef, error) {
	switch sel.Name {
	case "kopfexamples", "kopfexample", "KopfExample", "kex":
		return kopfExamples, nil
	case "pods", "pod":
		return pods, nil
	}
	return abi.ResourceRef{}, errors.New("not served")
}

func spec(id string, kind abi.HandlerKind, resource string, change func(*abi.HandlerSpec)) abi.HandlerSpec {
	s := abi.HandlerSpec{ID: id, Kind: kind}
	if resource != "" {
		s.Resource = &abi.ResourceSelector{Name: resource}
	}
	if change != nil {
		change(&s)
	}
	return s
}

func manifest(name string, handlers ...abi.HandlerSpec) abi.Manifest {
	return abi.Manifest{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: name}, Handlers: handlers}
}

func mustNew(t *testing.T, manifests ...abi.Manifest) *Registry {
	t.Helper()
	r, err := New(manifests, resolver)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNew(t *testing.T) {
	r := mustNew(t,
		manifest("one",
			spec("create_fn", abi.KindCreate, "kopfexamples", nil),
			spec("start", abi.KindStartup, "", nil),
			spec("pod_fn", abi.KindEvent, "pods", nil),
			spec("lost", abi.KindCreate, "unknownthings", nil),
		),
		manifest("two", spec("update_fn", abi.KindUpdate, "kex", nil), spec("create_fn", abi.KindCreate, "pods", nil)),
	)
	if got := r.Resources(); !reflect.DeepEqual(got, []abi.ResourceRef{kopfExamples, pods}) {
		t.Errorf("resources = %v", got)
	}
	if got := IDs(r.Handlers(kopfExamples)); !reflect.DeepEqual(got, []string{"create_fn", "update_fn"}) {
		t.Errorf("kopfexamples handlers = %v", got)
	}
	if got := IDs(r.Handlers(pods, abi.KindEvent)); !reflect.DeepEqual(got, []string{"pod_fn"}) {
		t.Errorf("pod events = %v", got)
	}
	if got := IDs(r.Activities(abi.KindStartup)); !reflect.DeepEqual(got, []string{"start"}) {
		t.Errorf("startup = %v", got)
	}
	if u := r.Unresolved(); len(u) != 1 || u[0].Spec.ID != "lost" || u[0].Module != "one" {
		t.Errorf("unresolved = %v", u)
	}
	if h := r.Handlers(kopfExamples)[1]; h.Module != "two" || h.Kind() != abi.KindUpdate {
		t.Errorf("handler = %+v", h)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name      string
		manifests []abi.Manifest
		want      string
	}{
		{"invalid manifest", []abi.Manifest{manifest("m", spec("f", abi.KindField, "pods", nil))}, "field handler without a field"},
		{"wrong abi version", []abi.Manifest{{ABIVersion: 99, Module: abi.ModuleInfo{Name: "m"}}}, "module[m]"},
		{"same id on one resource in two modules", []abi.Manifest{
			manifest("a", spec("create_fn", abi.KindCreate, "kopfexamples", nil)),
			manifest("b", spec("create_fn", abi.KindCreate, "kex", nil)),
		}, "declared by module[a] and module[b]"},
		{"bad literal", []abi.Manifest{manifest("m", spec("f", abi.KindField, "pods", func(s *abi.HandlerSpec) {
			s.Filters.Field = "spec.x"
			s.Filters.Value = &abi.ValueFilter{Value: json.RawMessage(`{`)}
		}))}, "handler[f]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.manifests, resolver)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestExtraFields(t *testing.T) {
	field := func(f string) func(*abi.HandlerSpec) { return func(s *abi.HandlerSpec) { s.Filters.Field = f } }
	r := mustNew(t, manifest("m",
		spec("a", abi.KindField, "kopfexamples", field("status.phase")),
		spec("b", abi.KindUpdate, "kopfexamples", field("spec.x")),
		spec("c", abi.KindEvent, "kopfexamples", field("status.phase")),
		spec("d", abi.KindTimer, "kopfexamples", field("status.ready")),
		spec("e", abi.KindIndex, "kopfexamples", field("status.indexed")),
		spec("f", abi.KindCreate, "kopfexamples", nil),
	))
	var got []string
	for _, p := range r.ExtraFields(kopfExamples) {
		got = append(got, p.String())
	}
	if want := []string{"status.phase", "spec.x", "status.ready"}; !reflect.DeepEqual(got, want) {
		t.Errorf("extra fields = %v, want %v", got, want)
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	m, err := objects.DecodeMap([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func equalJSON(v any, s string) bool {
	want, err := objects.Decode([]byte(s))
	return err == nil && objects.Equal(v, want)
}

// TestOneFunctionSeveralResources: one function declared for several
// resources under one kind (abi allows it when the entries differ only in
// their resource and param) serves each resource once: two selectors that
// name the same resource are one handler, the first.
func TestOneFunctionSeveralResources(t *testing.T) {
	param := func(p string) func(*abi.HandlerSpec) {
		return func(s *abi.HandlerSpec) { s.Options.Param = json.RawMessage(p) }
	}
	m := manifest("one",
		spec("fn", abi.KindEvent, "pods", param(`1`)),
		spec("fn", abi.KindEvent, "kopfexamples", param(`2`)),
		spec("fn", abi.KindEvent, "pod", param(`3`)), // pods again
	)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, m)
	for _, tt := range []struct {
		ref   abi.ResourceRef
		param string
	}{{pods, `1`}, {kopfExamples, `2`}} {
		hs := r.Handlers(tt.ref, abi.KindEvent)
		if len(hs) != 1 || string(hs[0].Spec.Options.Param) != tt.param {
			t.Errorf("%s: handlers %v, want fn once with param %s", tt.ref.Plural, hs, tt.param)
		}
	}
}
