package wasmrt

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestRecycle: a pooled instance is replaced by a fresh one after
// Options.RecycleCalls calls, or after a call that left its memory above
// Options.RecycleBytes; the module serves on with the fresh one.
func TestRecycle(t *testing.T) {
	wasm := wasmtest.Bytes(t, "testguests/misbehave")
	call := func(t *testing.T, m *Module, size int) {
		t.Helper()
		if _, err := m.Handle(t.Context(), request("ok", size), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []struct {
		lang, handler string
		wasm          func() []byte
	}{
		{"go", "ok", func() []byte { return wasm }},
		{"rust", "create_fn", func() []byte { return guestwasm.Bytes(t, guestwasm.Rust, "kopfexample") }},
		{"assemblyscript", "create_fn", func() []byte { return guestwasm.Bytes(t, guestwasm.AssemblyScript, "kopfexample") }},
		{"python", "create_fn", func() []byte { return guestwasm.Bytes(t, guestwasm.Python, "kopfexample") }},
	} {
		t.Run("calls/"+g.lang, func(t *testing.T) {
			m, err := newRuntime(t, Options{PoolSize: 1, RecycleCalls: 3, Logger: discardLogger()}).Load(t.Context(), g.lang, g.wasm())
			if err != nil {
				t.Fatal(err)
			}
			for range 7 {
				if _, err := m.Handle(t.Context(), request(g.handler, 100), nil); err != nil {
					t.Fatal(err)
				}
			}
			if st := m.Stats(); st.Recycled != 2 || st.Created != 3 || st.Live != 1 {
				t.Errorf("after 7 calls recycling every 3rd: %+v, want 2 recycled, 3 created, 1 live", st)
			}
		})
	}
	t.Run("bytes", func(t *testing.T) {
		probe, err := newRuntime(t, Options{PoolSize: 1, Logger: discardLogger()}).Load(t.Context(), "misbehave", wasm)
		if err != nil {
			t.Fatal(err)
		}
		call(t, probe, 100)
		mark := probe.Stats().MemoryBytes + 4<<20 // 4 MiB above a small call's memory
		m, err := newRuntime(t, Options{PoolSize: 1, RecycleBytes: mark, Logger: discardLogger()}).Load(t.Context(), "misbehave", wasm)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			call(t, m, 100)
		}
		if st := m.Stats(); st.Recycled != 0 {
			t.Fatalf("small calls recycled the instance: %+v (mark %d)", st, mark)
		}
		call(t, m, 12<<20) // a 12 MiB object: the guest's memory grows past the mark
		if st := m.Stats(); st.Recycled != 1 || st.MemoryBytes != 0 {
			t.Fatalf("after a 12 MiB call: %+v, want the instance recycled", st)
		}
		call(t, m, 100)
		if st := m.Stats(); st.Recycled != 1 || st.Created != 2 || st.MemoryBytes > mark {
			t.Errorf("after the next small call: %+v, want a fresh instance under the mark", st)
		}
	})
}
