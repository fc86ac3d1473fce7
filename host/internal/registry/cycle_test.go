package registry_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

var ref = abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}

// cycle runs one processing cycle as the reactor does, with every handler
// answering success and {"message": <id>} (delete handlers nothing), and
// returns the requests.
func cycle(t *testing.T, reg *registry.Registry, st *persistence.Storage, body map[string]any, event string, initial, subresource bool, now time.Time) []persistence.Request {
	t.Helper()
	fresh := st.Essence(body, reg.ExtraFields(ref))
	old, unknown, err := st.FetchDiffBase(body, fresh)
	if err != nil {
		t.Fatal(err)
	}
	c := registry.DetectCause(registry.CauseInput{
		EventType: event, Body: body, Finalizer: st.Finalizer(),
		Old: old, OldUnknown: unknown, New: fresh, Initial: initial,
	})
	p := persistence.NewPatch(subresource)
	if c.Reason == registry.ReasonGone {
		return nil
	}
	need, err := reg.RequiresFinalizer(ref, &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case need && !persistence.DeletionOngoing(body):
		st.AddFinalizer(p, body)
	case !need && !persistence.DeletionOngoing(body):
		st.RemoveFinalizer(p, body)
	}
	due, err := reg.Due(ref, &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	owned := reg.ChangingIDs(ref)
	state, err := st.LoadState(body, owned)
	if err != nil {
		t.Fatal(err)
	}
	state.ForCause(p, c.Reason, registry.IDs(due), now)
	for _, h := range due {
		if !state.Record(h.ID()).Awakened(now) {
			continue
		}
		limits := execution.LimitsFor(h.Spec, time.Minute)
		step, failed := execution.Check(limits, state.Record(h.ID()), now)
		if !failed {
			step = execution.Classify(limits, state.Record(h.ID()), now, abi.Outcome{Status: abi.OutcomeSuccess}, nil)
		}
		state.Set(h.ID(), step.Record)
		if step.Deliver && h.Kind() != abi.KindDelete { // the benchmark's delete handler returns nothing
			if err := p.AddResult(h.ID(), json.RawMessage(`{"message":"`+h.ID()+`"}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := state.Store(p); err != nil {
		t.Fatal(err)
	}
	if c.Handling() && state.Done() {
		state.Purge(p, owned)
		if c.Reason != abi.ReasonDelete {
			if err := st.StoreDiffBase(p, body, c.New); err != nil {
				t.Fatal(err)
			}
		} else {
			st.RemoveFinalizer(p, body)
		}
	}
	p.Minimize(body)
	reqs, err := p.Requests()
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// applyAll applies merge requests to the body as the API server would.
func applyAll(t *testing.T, body map[string]any, reqs []persistence.Request) map[string]any {
	t.Helper()
	for _, r := range reqs {
		doc, err := objects.DecodeMap(r.Data)
		if err != nil || r.Type != persistence.MergePatchType {
			t.Fatalf("request %s: %v", r.Data, err)
		}
		objects.Remove(doc, objects.Path{"metadata", "resourceVersion"})
		body = objects.ApplyMerge(body, doc).(map[string]any)
	}
	return body
}

func describe(reqs []persistence.Request) string {
	var parts []string
	for _, r := range reqs {
		parts = append(parts, "["+r.Subresource+"] "+string(r.Data))
	}
	return strings.Join(parts, "\n")
}

// The benchmark's workload: create, update, delete handlers returning a
// message. Every change costs one request when status is not a subresource,
// and one per endpoint touched when it is.
func TestKopfExamplesCycles(t *testing.T) {
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "kopfexamples"}, Handlers: []abi.HandlerSpec{
		{ID: "create_fn", Kind: abi.KindCreate, Resource: &abi.ResourceSelector{Name: "kopfexamples"}},
		{ID: "update_fn", Kind: abi.KindUpdate, Resource: &abi.ResourceSelector{Name: "kopfexamples"}},
		{ID: "delete_fn", Kind: abi.KindDelete, Resource: &abi.ResourceSelector{Name: "kopfexamples"}},
	}}}, func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	modes := []struct {
		subresource, inStatus bool
		create, update        int
	}{
		{false, false, 1, 1}, // everything in one merge patch per change
		{true, false, 2, 2},  // main (diff-base, finalizer) + /status (results)
		{true, true, 2, 1},   // the diff-base travels with the results
	}
	for _, mode := range modes {
		subresource := mode.subresource
		st, err := persistence.New(persistence.Options{Prefix: "kopf.zalando.org", Finalizer: "kopf.zalando.org/KopfFinalizerMarker", V1Keys: true, DiffBaseInStatus: mode.inStatus})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := objects.DecodeMap([]byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"ex","resourceVersion":"1"},"spec":{"field":"a"}}`))
		steps := []struct {
			name   string
			event  string
			change func(map[string]any)
			want   int
		}{
			{"create", "ADDED", nil, mode.create},
			{"the create's own echo", "MODIFIED", nil, 0},
			{"update", "MODIFIED", func(b map[string]any) { objects.Set(b, objects.Path{"spec", "field"}, "b") }, mode.update},
			{"the update's own echo", "MODIFIED", nil, 0},
			{"delete", "MODIFIED", func(b map[string]any) {
				objects.Set(b, objects.Path{"metadata", "deletionTimestamp"}, "2026-01-01T00:00:00Z")
			}, 1},
			{"free", "MODIFIED", nil, 0},
			{"gone", "DELETED", nil, 0},
		}
		for _, s := range steps {
			if s.change != nil {
				s.change(body)
			}
			reqs := cycle(t, reg, st, body, s.event, false, subresource, now)
			if len(reqs) != s.want {
				t.Errorf("mode %+v, %s: %d requests, want %d:\n%s", mode, s.name, len(reqs), s.want, describe(reqs))
			}
			body = applyAll(t, body, reqs)
		}
		if objects.GetString(body, objects.Path{"status", "create_fn", "message"}) != "create_fn" ||
			objects.GetString(body, objects.Path{"status", "update_fn", "message"}) != "update_fn" {
			t.Errorf("results missing: %v", body["status"])
		}
		if fin, _ := objects.Get(body, objects.Path{"metadata", "finalizers"}); fin != nil {
			t.Errorf("finalizer left: %v", fin)
		}
		for key := range objects.GetMap(body, objects.Path{"metadata", "annotations"}) {
			if key != "kopf.zalando.org/last-handled-configuration" || mode.inStatus {
				t.Errorf("progress left behind: %s", key)
			}
		}
	}
}

// An object whose diff-base does not fit as JSON (Kopf #1087): the
// diff-base goes compressed or as a digest, the create's echo is a noop
// (no second creation), a change is an update (with old=null after a
// digest), and the deletion releases the object.
func TestLargeObjectCycles(t *testing.T) {
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "large"}, Handlers: []abi.HandlerSpec{
		{ID: "create_fn", Kind: abi.KindCreate, Resource: &abi.ResourceSelector{Name: "kopfexamples"}},
		{ID: "update_fn", Kind: abi.KindUpdate, Resource: &abi.ResourceSelector{Name: "kopfexamples"}},
		{ID: "delete_fn", Kind: abi.KindDelete, Resource: &abi.ResourceSelector{Name: "kopfexamples"}},
	}}}, func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	random := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 300<<10) // what gzip cannot shrink much
	for i := range noise {
		noise[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"[random.IntN(64)]
	}
	tests := []struct {
		name     string
		inStatus bool
		blob     string
		prefix   string
	}{
		{"annotation, compressible", false, strings.Repeat("b", 300<<10), persistence.GzipPrefix},
		{"annotation, incompressible", false, string(noise), persistence.DigestPrefix},
		{"status, compressible", true, strings.Repeat("b", 1200<<10), persistence.GzipPrefix},
		{"status, incompressible", true, string(noise) + string(noise) + string(noise) + string(noise), persistence.DigestPrefix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := persistence.New(persistence.Options{Prefix: "kopf.zalando.org", Finalizer: "kopf.zalando.org/KopfFinalizerMarker",
				V1Keys: true, DiffBaseInStatus: tt.inStatus, DiffBaseAnnotationBytes: 128 << 10, DiffBaseObjectBytes: 1280 << 10})
			if err != nil {
				t.Fatal(err)
			}
			body := map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
				"metadata": map[string]any{"name": "ex", "resourceVersion": "1"}, "spec": map[string]any{"field": "a", "blob": tt.blob}}
			where := objects.Path{"metadata", "annotations", "kopf.zalando.org/last-handled-configuration"}
			if tt.inStatus {
				where = objects.Path{"status", "kopf", "last-handled-configuration"}
			}
			steps := []struct {
				name   string
				event  string
				change func(map[string]any)
				some   bool // some requests, or none
			}{
				{"create", "ADDED", nil, true},
				{"the create's own echo", "MODIFIED", nil, false},
				{"update", "MODIFIED", func(b map[string]any) { objects.Set(b, objects.Path{"spec", "field"}, "b") }, true},
				{"the update's own echo", "MODIFIED", nil, false},
				{"delete", "MODIFIED", func(b map[string]any) {
					objects.Set(b, objects.Path{"metadata", "deletionTimestamp"}, "2026-01-01T00:00:00Z")
				}, true},
			}
			for _, s := range steps {
				if s.change != nil {
					s.change(body)
				}
				reqs := cycle(t, reg, st, body, s.event, false, true, now)
				if (len(reqs) > 0) != s.some {
					t.Errorf("%s: %d requests:\n%.300s", s.name, len(reqs), describe(reqs))
				}
				body = applyAll(t, body, reqs)
				if s.name == "create" && !strings.HasPrefix(objects.GetString(body, where), tt.prefix) {
					t.Fatalf("the diff-base at %s is %.40q, want %q...", where, objects.GetString(body, where), tt.prefix)
				}
			}
			if objects.GetString(body, objects.Path{"status", "update_fn", "message"}) != "update_fn" {
				t.Errorf("the update did not run")
			}
			if fin, _ := objects.Get(body, objects.Path{"metadata", "finalizers"}); fin != nil {
				t.Errorf("finalizer left: %v", fin)
			}
		})
	}
}
