package instrument

import (
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// FuzzInterruptible feeds arbitrary bytes to Interruptible: it must not
// panic, every error must be one of the documented kinds, and an output
// must be accepted again (with another name).
func FuzzInterruptible(f *testing.F) {
	for _, tc := range rewriteCases() {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Interruptible(in, "flag")
		if err != nil {
			checkErrorKind(t, err)
			return
		}
		if _, err := Interruptible(out, "flag2"); err != nil {
			t.Fatalf("output of a successful rewrite refused: %v", err)
		}
	})
}

// checkErrorKind fails unless err is malformed, an unusable name or
// unsupported.
func checkErrorKind(t *testing.T, err error) {
	t.Helper()
	var unsup *UnsupportedError
	if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrExportName) && !errors.As(err, &unsup) {
		t.Fatalf("undocumented error: %v", err)
	}
}

// BenchmarkInterruptible rewrites a 3.5 MB module built by the Go
// toolchain.
func BenchmarkInterruptible(b *testing.B) {
	in := wasmtest.Bytes(b, "testguests/good")
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Interruptible(in, flagName); err != nil {
			b.Fatal(err)
		}
	}
}
