package wasmrt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestLoad(t *testing.T) {
	r := newRuntime(t, Options{})
	wasm := guest(t, "good")
	m, err := r.Load(t.Context(), "good.wasm", wasm)
	if err != nil {
		t.Fatal(err)
	}
	man := m.Manifest()
	if man.Module.Name != "good" || len(man.Handlers) != 3 || man.Handlers[0].ID != "ok" {
		t.Errorf("manifest = %+v", man)
	}
	if m.Digest() != Digest(wasm) || !strings.HasPrefix(m.Digest(), "sha256:") || len(m.Digest()) != 71 {
		t.Errorf("digest = %q", m.Digest())
	}
	if s := m.Stats(); s.Live != 1 || s.Idle != 1 || s.Created != 1 {
		t.Errorf("stats after load = %+v, want the manifest's instance pooled", s)
	}
	if !m.code.interruptible {
		t.Error("the module was compiled without loop checks (instrument refused it)")
	}
	m.Close()
	if _, err := m.Handle(t.Context(), request("ok", 10), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("handle after close: %v, want ErrClosed", err)
	}
	if s := m.Stats(); s.Live != 0 {
		t.Errorf("stats after close = %+v", s)
	}
}

func TestLoadErrors(t *testing.T) {
	r := newRuntime(t, Options{})
	tests := []struct {
		name  string
		wasm  []byte
		is    error  // errors.Is target, or nil
		as    any    // errors.As target, or nil
		words string // must be in the message
	}{
		{"text", []byte("#!/bin/sh\necho hello"), ErrNotWasm, nil, "go build -buildmode=c-shared"},
		{"truncated", []byte("\x00asm\x01\x00\x00\x00\x01\x05"), ErrCompile, nil, "rebuild it"},
		// A call to a function whose type index is out of range, met before
		// that function's own check: wazero (v1.11, v1.12) panics validating
		// it. Found by FuzzInterruptible; it crashed the host.
		{"badtypeindex", badTypeIndexModule, ErrCompile, nil, "rebuild it"},
		// A code section of 6 bytes declaring 3 billion bodies: wazero
		// allocated by the count first, and the failed allocation ended the
		// host (FuzzInterruptible's crasher f94b21bfe6f23c3f, made small).
		{"hugecount", []byte("\x00asm\x01\x00\x00\x00\x0a\x06\x80\xbc\xc1\x96\x0b\x00"), ErrCompile, nil, "a count of 3000000000 in 1 bytes"},
		{"noexport", guest(t, "noexport"), ErrMissingExport, nil, "not kopf_handle: rebuild it with the kopf-wasm guest SDK for ABI v1"},
		{"wrongabi", guest(t, "wrongabi"), nil, new(*abi.VersionError), "built for ABI v2, but this host speaks v1"},
		{"badmanifest", guest(t, "badmanifest"), nil, new(*abi.ManifestError), "has no id"},
		{"manifestjson", guest(t, "manifestjson"), ErrManifestJSON, nil, "rebuild it with the kopf-wasm guest SDK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := r.Load(t.Context(), tt.name+".wasm", tt.wasm)
			if err == nil {
				m.Close()
				t.Fatal("loaded")
			}
			var lerr *LoadError
			if !errors.As(err, &lerr) || lerr.Module != tt.name+".wasm" || lerr.Digest != Digest(tt.wasm) {
				t.Errorf("error %T %v is not a *LoadError for the module", err, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if tt.as != nil && !errors.As(err, tt.as) {
				t.Errorf("error %v is not a %T", err, tt.as)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.words) || strings.Contains(msg, "\n") {
				t.Errorf("message %q: want one line with %q", msg, tt.words)
			}
		})
	}
	// Failed loads leave nothing behind.
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.compiled) != 0 || len(r.modules) != 0 {
		t.Errorf("runtime keeps %d compiled and %d modules after failed loads", len(r.compiled), len(r.modules))
	}
}

func TestLoadCompilesOncePerDigest(t *testing.T) {
	r := newRuntime(t, Options{})
	wasm := guest(t, "good")
	const loaders = 4
	modules := make([]*Module, loaders)
	var wg sync.WaitGroup
	for i := range loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := r.Load(context.Background(), "good", wasm)
			if err != nil {
				t.Error(err)
				return
			}
			modules[i] = m
		}()
	}
	wg.Wait()
	if n := r.compiles.Load(); n != 1 {
		t.Errorf("%d concurrent loads compiled %d times, want 1", loaders, n)
	}
	for _, m := range modules {
		if m != nil {
			m.Close()
		}
	}
	// The last close frees the code: the next load compiles again.
	m := load(t, r, "good")
	defer m.Close()
	if n := r.compiles.Load(); n != 2 {
		t.Errorf("compiles after reload = %d, want 2", n)
	}
}

func TestLoadWithCacheDir(t *testing.T) {
	dir := t.TempDir()
	r := newRuntime(t, Options{CacheDir: dir})
	m := load(t, r, "good")
	m.Close()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("cache dir has %d entries (%v), want the compiled code", len(entries), err)
	}
	// A second runtime on the same directory loads from the cache.
	r2 := newRuntime(t, Options{CacheDir: dir})
	m2 := load(t, r2, "good")
	defer m2.Close()
	if _, err := m2.Handle(t.Context(), request("ok", 100), nil); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeClose(t *testing.T) {
	r := newRuntime(t, Options{})
	m := load(t, r, "good")
	if err := r.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Handle(t.Context(), request("ok", 10), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("handle on a module of a closed runtime: %v, want ErrClosed", err)
	}
	if _, err := r.Load(t.Context(), "good", guest(t, "good")); !errors.Is(err, ErrClosed) {
		t.Errorf("load into a closed runtime: %v, want ErrClosed", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.compiled) != 0 {
		t.Errorf("a closed runtime keeps %d compiled modules", len(r.compiled))
	}
}

// TestLoadKeepsTheRewrite shows that with a cache directory the rewritten
// module is kept, and that a fresh runtime on the same directory takes it
// from there rather than rewriting the module again.
func TestLoadKeepsTheRewrite(t *testing.T) {
	dir := t.TempDir()
	wasm := guest(t, "good")
	r := newRuntime(t, Options{CacheDir: dir})
	if _, err := r.Load(t.Context(), "good", wasm); err != nil {
		t.Fatal(err)
	}
	path := keptRewrite(t, r, wasm)
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the rewritten module was not kept: %v", err)
	}
	if bytes.Equal(kept, wasm) || !bytes.Contains(kept, []byte(interruptExport)) {
		t.Fatalf("the kept module (%d bytes) is not the rewrite of the original (%d bytes)", len(kept), len(wasm))
	}
	// Mark the kept file (a custom section "x" at the end keeps it a valid
	// module) to see whether the next runtime reads it.
	marked := append(kept, 0x00, 0x02, 0x01, 'x')
	if err := os.WriteFile(path, marked, 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := newRuntime(t, Options{CacheDir: dir})
	split, st := r2.split(wasm)
	st.close()
	code, unmap, ok := r2.interruptible(Digest(split), split)
	if !ok || !bytes.Equal(code, marked) {
		t.Fatal("a second runtime did not reuse the kept rewrite")
	}
	if unmap == nil {
		t.Error("the kept rewrite was read into the heap, not mapped")
	} else {
		unmap()
	}
}

// TestLoadRepairsADamagedRewrite: a kept rewrite cut short (a crash while
// it was written, say) still starts like wasm; the load must not fail on
// it and blame the module, but rewrite it again and keep the repair.
func TestLoadRepairsADamagedRewrite(t *testing.T) {
	dir := t.TempDir()
	wasm := guest(t, "good")
	if _, err := newRuntime(t, Options{CacheDir: dir}).Load(t.Context(), "good", wasm); err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{}
	r := newRuntime(t, Options{CacheDir: dir, Logger: slog.New(logs)})
	path := keptRewrite(t, r, wasm)
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, kept[:100], 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := r.Load(t.Context(), "good", wasm)
	if err != nil {
		t.Fatalf("load with a damaged kept rewrite: %v", err)
	}
	if _, err := m.Handle(t.Context(), request("ok", 1<<10), nil); err != nil {
		t.Errorf("a call after the repair: %v", err)
	}
	if _, found := logs.find("the kept rewrite of the module does not compile; rewriting it"); !found {
		t.Error("the repair was not logged")
	}
	if again, err := os.ReadFile(path); err != nil || !bytes.Equal(again, kept) {
		t.Errorf("the kept rewrite was not repaired: %d bytes (want %d), %v", len(again), len(kept), err)
	}
}

// TestInterruptibleFallsBack shows that a module the rewriter refuses is
// compiled as it is (with wazero's context checks), and that the reason
// is logged: here a module that already exports the interrupt flag's name.
func TestInterruptibleFallsBack(t *testing.T) {
	logs := &logRecorder{}
	r := newRuntime(t, Options{Logger: slog.New(logs)})
	// (module (global i32 (i32.const 0)) (export "kopf_wasm_interrupt" (global 0)))
	clash := []byte("\x00asm\x01\x00\x00\x00" +
		"\x06\x06\x01\x7f\x00\x41\x00\x0b" +
		"\x07\x17\x01\x13kopf_wasm_interrupt\x03\x00")
	code, _, ok := r.interruptible(Digest(clash), clash)
	if ok || !bytes.Equal(code, clash) {
		t.Fatalf("interruptible = %d bytes, %v; want the module unchanged and no checks", len(code), ok)
	}
	attrs, found := logs.find("the module cannot get loop checks; it runs with wazero's slower context checks")
	if !found || !strings.Contains(attrs["reason"], "already exported") {
		t.Errorf("log = %v, %v", attrs, found)
	}
}

// badTypeIndexModule declares two types and four functions, three of them
// of type 48; the first calls the second (FuzzInterruptible's crasher
// eb8b6b2300fa5aeb, as found).
var badTypeIndexModule = []byte("\x00asm\x01\x00\x00\x00\x01\n\x02`\x00\x01\x7f`\x01\x7f\x01\x7f\x03\x05\x04\x00000\nC\x04" +
	"\f\x00A\x880\x10\x0100000\v\x15\x010\x7f00000000000000000\v\x1a\x00000000000000000000000000\v\x03\x000\v")

// keptRewrite returns where r keeps the rewrite of wasm's code: named after
// the digest of what Runtime.split left to compile.
func keptRewrite(t *testing.T, r *Runtime, wasm []byte) string {
	t.Helper()
	code, st := r.split(wasm)
	st.close()
	return r.instrumentedPath(Digest(code))
}
