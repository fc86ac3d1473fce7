package persistence

import (
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Sub-handlers' records are read from the parent's subrefs, stored with
// the others, purged with their parent, and never counted as the cause's
// handlers.
func TestSubrecords(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	now := ts("2026-01-01T00:01:00Z")
	parent := `{\"started\":\"2026-01-01T00:00:00.000000+00:00\",\"delayed\":\"2026-01-01T00:00:30.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":false,\"failure\":false,\"subrefs\":[\"p/a\",\"p/b\"]}`
	b := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/p":"`+parent+`","kopf.zalando.org/p.a":"`+recCreateDone+`"}}}`)
	st, err := s.LoadState(b, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	st.ForCause(NewPatch(true), abi.ReasonCreate, []string{"p"}, now)
	subs, err := st.Subrecords("p")
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 1 || !subs["p/a"].Success {
		t.Fatalf("subrecords = %+v; want p/a's only (p/b has no record yet)", subs)
	}
	st.SetSub("p/b", succeeded(NewRecord(abi.ReasonCreate, now), now))
	if c := st.Counts(); c != (Counts{Running: 1}) {
		t.Errorf("counts = %+v; want the parent alone, running", c)
	}
	if st.Done() {
		t.Error("done while the parent is unfinished")
	}
	p := NewPatch(true)
	if err := st.Store(p); err != nil {
		t.Fatal(err)
	}
	if got := requests(t, p); !strings.Contains(got, `kopf.zalando.org/p.b`) || strings.Contains(got, `kopf.zalando.org/p.a`) {
		t.Errorf("store wrote %s; want p/b's new record only", got)
	}
	p = NewPatch(true)
	st.Purge(p, []string{"p"})
	got := requests(t, p)
	// p/b was never stored on the object: nothing to purge of it.
	for _, k := range []string{"kopf.zalando.org/p\"", "kopf.zalando.org/p.a"} {
		if !strings.Contains(got, k) {
			t.Errorf("purge %s: %s missing", got, k)
		}
	}
}
