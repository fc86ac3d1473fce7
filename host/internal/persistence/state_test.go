package persistence

import (
	"reflect"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

const (
	recCreateRetrying = `{\"started\":\"2026-01-01T00:00:00.000000+00:00\",\"delayed\":\"2026-01-01T00:02:00.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":false,\"failure\":false,\"message\":\"later\"}`
	recCreateDone     = `{\"started\":\"2026-01-01T00:00:00.000000+00:00\",\"stopped\":\"2026-01-01T00:00:01.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}`
	recUpdateRunning  = `{\"started\":\"2026-01-01T00:00:00.000000+00:00\",\"purpose\":\"update\",\"retries\":2,\"success\":false,\"failure\":false}`
)

func TestStateFlowOfOneCause(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	now := ts("2026-01-01T00:01:00Z")
	b := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/create_a":"`+recCreateDone+`","kopf.zalando.org/create_b":"`+recCreateRetrying+`"}}}`)
	owned := []string{"create_a", "create_b", "create_c", "update_x"}
	st, err := s.LoadState(b, owned)
	if err != nil {
		t.Fatal(err)
	}
	if sup := st.ForCause(NewPatch(true), abi.ReasonCreate, []string{"create_a", "create_b", "create_c"}, now); len(sup) != 0 {
		t.Errorf("superseded = %v", sup)
	}
	// create_a is done, create_b sleeps until 00:02, create_c is new.
	if got := st.Awakened(now); !reflect.DeepEqual(got, []string{"create_c"}) {
		t.Errorf("awakened = %v", got)
	}
	if d, ok := st.Delay(now); !ok || d != 0 {
		t.Errorf("delay = %v %v (create_c is due now)", d, ok)
	}
	st.Set("create_c", succeeded(st.Record("create_c"), now))
	if st.Done() {
		t.Errorf("done while create_b retries")
	}
	if d, ok := st.Delay(now); !ok || d != time.Minute {
		t.Errorf("delay = %v %v, want 1m for create_b", d, ok)
	}
	if c := st.Counts(); c != (Counts{Success: 2, Running: 1}) {
		t.Errorf("counts = %+v", c)
	}
	p := NewPatch(true)
	if err := st.Store(p); err != nil {
		t.Fatal(err)
	}
	want := `main merge {"metadata":{"annotations":{"kopf.zalando.org/create_c":"{\"started\":\"2026-01-01T00:01:00.000000+00:00\",\"stopped\":\"2026-01-01T00:01:00.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}}}`
	if got := requests(t, p); got != want {
		t.Errorf("store: got  %s\nwant %s", got, want)
	}

	// Later create_b succeeds: the cause is done and everything is purged.
	later := ts("2026-01-01T00:03:00Z")
	st.Set("create_b", succeeded(st.Record("create_b"), later))
	if !st.Done() {
		t.Fatalf("not done")
	}
	if _, ok := st.Delay(later); ok {
		t.Errorf("a delay when done")
	}
	_ = st.Store(p)
	st.Purge(p, owned)
	want = `main merge {"metadata":{"annotations":{"kopf.zalando.org/create_a":null,"kopf.zalando.org/create_b":null}}}`
	if got := requests(t, p); got != want {
		t.Errorf("purge: got  %s\nwant %s", got, want)
	}
}

func TestStateSupersededCause(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	now := ts("2026-01-01T00:01:00Z")
	// An update was in progress (update_x running, fld retrying) when the
	// object was marked for deletion; fld is also due for the deletion.
	b := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/update_x":"`+recUpdateRunning+`","kopf.zalando.org/fld":"`+recUpdateRunning+`"}}}`)
	st, err := s.LoadState(b, []string{"update_x", "fld", "delete_d"})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPatch(true)
	sup := st.ForCause(p, abi.ReasonDelete, []string{"fld", "delete_d"}, now)
	if want := map[abi.Reason]Counts{abi.ReasonUpdate: {Running: 2}}; !reflect.DeepEqual(sup, want) {
		t.Errorf("superseded = %v", sup)
	}
	if rec := st.Record("fld"); rec.Purpose != abi.ReasonDelete || rec.Retries != 2 {
		t.Errorf("fld not taken over: %+v", rec)
	}
	if rec := st.Record("update_x"); !rec.Equal(Record{}) {
		t.Errorf("update_x still in the state: %+v", rec)
	}
	if got := st.Awakened(now); !reflect.DeepEqual(got, []string{"fld", "delete_d"}) {
		t.Errorf("awakened = %v", got)
	}
	want := `main merge {"metadata":{"annotations":{"kopf.zalando.org/update_x":null}}}`
	if got := requests(t, p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The taken-over record changed (purpose), so it is stored again.
	if err := st.Store(p); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Get(annotationPath("kopf.zalando.org/fld")); v == nil {
		t.Errorf("fld not re-stored")
	}
}

func TestStateStoresOnlyChanges(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	b := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/create_b":"`+recCreateRetrying+`"}}}`)
	st, err := s.LoadState(b, []string{"create_b"})
	if err != nil {
		t.Fatal(err)
	}
	st.ForCause(NewPatch(true), abi.ReasonCreate, []string{"create_b"}, ts("2026-01-01T00:01:00Z"))
	p := NewPatch(true)
	if err := st.Store(p); err != nil || !p.Empty() {
		t.Errorf("an unchanged record is written: %s %v", requests(t, p), err)
	}
	bad := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/create_b":"{"}}}`)
	if _, err := s.LoadState(bad, []string{"create_b"}); err == nil {
		t.Errorf("corrupt record accepted")
	}
}

// succeeded is rec after one successful attempt at now (what the execution
// layer's classification makes of a success).
func succeeded(rec Record, now time.Time) Record {
	if rec.Started.IsZero() {
		rec.Started = now.UTC()
	}
	rec.Retries++
	rec.Delayed, rec.Message = time.Time{}, ""
	rec.Stopped, rec.Success = now.UTC(), true
	return rec
}
