package reactor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// TestShares: a module holds at most its share; cycles past it park their
// objects, which are queued again one per freed worker, once each, and a
// wake that its cycle did not use passes to the next parked object.
func TestShares(t *testing.T) {
	var woken []objectKey
	s := newShares(func(m string) int {
		if m == "bad" {
			return 2
		}
		return 0
	}, func(k objectKey) { woken = append(woken, k) })
	key := func(n string) objectKey { return objectKey{resource: "r", name: n} }

	for _, n := range []string{"a", "b"} {
		if !s.acquire("bad", key(n)) {
			t.Fatalf("%s: refused within the share", n)
		}
	}
	for _, n := range []string{"c", "d", "c"} {
		if s.acquire("bad", key(n)) {
			t.Fatalf("%s: taken past the share", n)
		}
	}
	for range 100 {
		if !s.acquire("good", key("x")) {
			t.Fatal("a module without a share was refused")
		}
	}
	if got := s.stats("bad"); got.Busy != 2 || got.Waiting != 2 || got.Deferred != 3 || got.Limit != 2 {
		t.Errorf("stats %+v, want 2 busy, 2 waiting (c once), 3 deferred", got)
	}

	s.release("bad")
	if want := []objectKey{key("c")}; !slices.Equal(woken, want) {
		t.Fatalf("woken %v, want %v", woken, want)
	}
	// c runs and takes the freed worker: nothing more to wake.
	if !s.acquire("bad", key("c")) {
		t.Fatal("c, woken by a freed worker, was refused")
	}
	s.settle(key("c"))
	s.settle(key("a")) // not woken: nothing happens
	if len(woken) != 1 {
		t.Fatalf("woken %v, want c alone", woken)
	}
	// Two workers free: d is woken, then e and f park behind a full share.
	s.release("bad")
	if !s.acquire("bad", key("d")) {
		t.Fatal("d, woken by a freed worker, was refused")
	}
	s.settle(key("d"))
	for _, n := range []string{"e", "f"} {
		if s.acquire("bad", key(n)) {
			t.Fatalf("%s: taken past the share", n)
		}
	}
	// A worker frees: e is woken, but its cycle does not call the module
	// (the object is gone): its wake passes to f.
	s.release("bad")
	s.settle(key("e"))
	if want := []objectKey{key("c"), key("d"), key("e"), key("f")}; !slices.Equal(woken, want) {
		t.Fatalf("woken %v, want %v", woken, want)
	}
	if got := s.stats("bad"); got.Busy != 1 || got.Waiting != 0 {
		t.Errorf("stats %+v, want 1 busy, none waiting", got)
	}
}

// TestWorkerShare: a module's share is isolation.workers while the host
// serves other modules, and none when it serves this one alone or when
// the share is the whole pool.
func TestWorkerShare(t *testing.T) {
	tests := []struct {
		name             string
		modules          int
		workers, setting int
		want             int
	}{
		{"alone", 1, 16, 8, 0},
		{"with others", 3, 16, 8, 8},
		{"the whole pool", 3, 4, 8, 0},
		{"no share", 3, 16, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := settings.Default()
			set.Execution.Workers, set.Isolation.Workers = tt.workers, tt.setting
			o := &Operator{opts: Options{Settings: set}}
			mods := map[string]*wasmrt.Module{}
			for i := range tt.modules {
				mods[fmt.Sprint("m", i)] = nil
			}
			o.current.Store(&mods)
			if got := o.workerShare("m0"); got != tt.want {
				t.Errorf("workerShare = %d, want %d", got, tt.want)
			}
		})
	}
}
