package wasmrt

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestSleepCountsAgainstItsOwnModule: in every guest language, a handler
// that sleeps for an hour (Go's and TinyGo's time.Sleep, Rust's
// std::thread::sleep, Python's time.sleep, AssemblyScript's host sleep) is
// stopped by its call's timeout, and while it sleeps another module of the
// same runtime serves its calls: the sleeper's instance is the one
// discarded, and the other module is not touched. The timeout (20 s) is
// far above what a good call takes, far below the hour.
func TestSleepCountsAgainstItsOwnModule(t *testing.T) {
	guests := map[string]func(*testing.T) []byte{
		"go":     func(t *testing.T) []byte { return guest(t, "misbehave") },
		"tinygo": tinygoGuest("testguests/misbehave"),
		"rust":   func(t *testing.T) []byte { return guestwasm.Bytes(t, guestwasm.Rust, "misbehave") },
		"assemblyscript": func(t *testing.T) []byte {
			return guestwasm.Bytes(t, guestwasm.AssemblyScript, "misbehave")
		},
		"python": func(t *testing.T) []byte { return guestwasm.Bytes(t, guestwasm.Python, "misbehave") },
	}
	for lang, wasm := range guests {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			opts := limits
			opts.Timeout, opts.Logger = 20*time.Second, discardLogger()
			r := newRuntime(t, opts)
			sleeper, err := r.Load(t.Context(), "misbehave-"+lang, wasm(t))
			if err != nil {
				t.Fatal(err)
			}
			good := load(t, r, "good")
			slept := make(chan error, 1)
			go func() {
				_, err := sleeper.Handle(t.Context(), request("sleep", 100), nil)
				slept <- err
			}()
			if _, err := good.Handle(t.Context(), request("decode", 1024), nil); err != nil {
				t.Errorf("the other module, while %s sleeps: %v", lang, err)
			}
			select {
			case err := <-slept:
				t.Fatalf("the sleeper returned (%v) before the other module's call", err)
			default:
			}
			var cerr *CallError
			if err := <-slept; !errors.As(err, &cerr) || cerr.Kind != KindTimeout {
				t.Fatalf("sleep: %v, want %s", err, KindTimeout)
			}
			if s, g := sleeper.Stats(), good.Stats(); s.Discarded != 1 || g.Discarded != 0 {
				t.Errorf("discarded: the sleeper's %d, the other's %d; want 1 and 0", s.Discarded, g.Discarded)
			}
		})
	}
}

// tinygoGuest returns the TinyGo build of a test guest.
func tinygoGuest(pkg string) func(*testing.T) []byte {
	return func(t *testing.T) []byte {
		b, err := os.ReadFile(wasmtest.TinyGoPath(t, pkg))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}
