package testenv

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write creates path (and its folders) with the given content and mode.
func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func assertOneLine(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error spans several lines:\n%v", err)
	}
}

func TestModulePath(t *testing.T) {
	for _, tc := range []struct {
		name, gomod, want string
	}{
		{"plain", "module github.com/kopf-wasm/kopf-wasm\n\ngo 1.24.0\n", ModulePath},
		{"quoted with comment", "// c\nmodule \"github.com/kopf-wasm/kopf-wasm\" // root\n", ModulePath},
		{"other module", "module github.com/kopf-wasm/kopf-wasm/abi\n", "github.com/kopf-wasm/kopf-wasm/abi"},
		{"no module line", "go 1.24.0\n", ""},
		{"modulex is not module", "modulex foo\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "go.mod")
			write(t, p, tc.gomod, 0o644)
			if got := modulePath(p); got != tc.want {
				t.Errorf("modulePath = %q, want %q", got, tc.want)
			}
		})
	}
	if got := modulePath(filepath.Join(t.TempDir(), "absent")); got != "" {
		t.Errorf("modulePath of a missing file = %q, want empty", got)
	}
}

func TestFindRepoRoot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string // relative path -> go.mod content
		start  string            // relative folder to start from
		want   string            // relative root; "-" for not found
		wantOK bool
	}{
		{
			name:  "from a nested package",
			files: map[string]string{"go.mod": "module " + ModulePath + "\n"},
			start: "internal/testenv", want: ".", wantOK: true,
		},
		{
			name: "skips a nested module of the workspace",
			files: map[string]string{
				"go.mod":     "module " + ModulePath + "\n",
				"abi/go.mod": "module " + ModulePath + "/abi\n",
			},
			start: "abi/sub", want: ".", wantOK: true,
		},
		{
			name:  "another project is not the root",
			files: map[string]string{"go.mod": "module example.com/other\n"},
			start: "a/b", wantOK: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			for rel, content := range tc.files {
				write(t, filepath.Join(base, rel), content, 0o644)
			}
			start := filepath.Join(base, tc.start)
			if err := os.MkdirAll(start, 0o755); err != nil {
				t.Fatal(err)
			}
			got, ok := findRepoRoot(start)
			if ok != tc.wantOK {
				t.Fatalf("findRepoRoot ok = %v, want %v (root %q)", ok, tc.wantOK, got)
			}
			if ok && got != filepath.Join(base, tc.want) {
				t.Errorf("findRepoRoot = %q, want %q", got, filepath.Join(base, tc.want))
			}
		})
	}
}

func TestRepoRootOfThisCheckout(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, BuildScript)); err != nil {
		t.Errorf("RepoRoot() = %s, which has no %s: %v", root, BuildScript, err)
	}
}

func TestCheckAssets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		files       map[string]os.FileMode
		wantMissing []string // empty: no error
	}{
		{"empty folder", nil, []string{"etcd", "kube-apiserver"}},
		{"only etcd", map[string]os.FileMode{"etcd": 0o755}, []string{"kube-apiserver"}},
		{"not executable", map[string]os.FileMode{"etcd": 0o644, "kube-apiserver": 0o755}, []string{"etcd"}},
		{"both present", map[string]os.FileMode{"etcd": 0o755, "kube-apiserver": 0o755}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, mode := range tc.files {
				write(t, filepath.Join(dir, name), "#!/bin/sh\n", mode)
			}
			err := CheckAssets(dir)
			if len(tc.wantMissing) == 0 {
				if err != nil {
					t.Fatalf("CheckAssets: %v", err)
				}
				return
			}
			assertOneLine(t, err)
			if !errors.Is(err, ErrMissingBinaries) {
				t.Errorf("error does not wrap ErrMissingBinaries: %v", err)
			}
			for _, want := range append(tc.wantMissing, dir, BuildScript) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q: %v", want, err)
				}
			}
		})
	}
}

func TestResolveAssetsFromEnv(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(AssetsEnv, empty)
	_, err := ResolveAssets(context.Background(), io.Discard)
	assertOneLine(t, err)
	if !errors.Is(err, ErrMissingBinaries) {
		t.Errorf("error does not wrap ErrMissingBinaries: %v", err)
	}
	for _, want := range []string{empty, AssetsEnv, BuildScript} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}

	full := t.TempDir()
	write(t, filepath.Join(full, "etcd"), "", 0o755)
	write(t, filepath.Join(full, "kube-apiserver"), "", 0o755)
	t.Setenv(AssetsEnv, full)
	got, err := ResolveAssets(context.Background(), io.Discard)
	if err != nil || got != full {
		t.Errorf("ResolveAssets = %q, %v; want %q", got, err, full)
	}
}

func TestRunBuildScript(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         string // folder, or a substring of the error
		wantErr      bool
	}{
		{"prints the folder", "echo building >&2\necho /some/folder\n", "/some/folder", false},
		{"last stdout line wins", "echo noise\necho /the/folder\n", "/the/folder", false},
		{"failure names the last line", "echo 'controlplane: building etcd failed; check the proxy' >&2\nexit 1\n", "building etcd failed; check the proxy", true},
		{"prints nothing", "true\n", "printed no folder", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "build.sh")
			write(t, script, "#!/usr/bin/env bash\n"+tc.script, 0o755)
			got, err := runBuildScript(context.Background(), script, io.Discard)
			if tc.wantErr {
				assertOneLine(t, err)
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q does not contain %q", err, tc.want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("runBuildScript = %q, %v; want %q", got, err, tc.want)
			}
		})
	}

	_, err := runBuildScript(context.Background(), filepath.Join(t.TempDir(), "absent.sh"), io.Discard)
	assertOneLine(t, err)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), AssetsEnv) {
		t.Errorf("missing script: got %v", err)
	}
}

// Bad input is reported before any binary is looked for or built.
func TestNewBadInput(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	for _, tc := range []struct {
		name    string
		opts    Options
		wantIs  error
		wantSub string
	}{
		{"port clash", Options{APIServerPort: port}, ErrPortInUse, busy.Addr().String()},
		{"missing CRD file", Options{CRDPaths: []string{"/nonexistent/crd.yaml"}}, fs.ErrNotExist, "/nonexistent/crd.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// An empty assets folder: reaching the binaries would fail differently.
			t.Setenv(AssetsEnv, t.TempDir())
			env, err := New(context.Background(), tc.opts)
			if env != nil {
				_ = env.Stop()
			}
			assertOneLine(t, err)
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("error does not wrap %v: %v", tc.wantIs, err)
			}
			if !strings.Contains(err.Error(), tc.wantSub) {
				t.Errorf("error does not mention %q: %v", tc.wantSub, err)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	base := errors.New("first\nsecond\n")
	err := oneLine(base)
	assertOneLine(t, err)
	if got := err.Error(); got != "first; second" {
		t.Errorf("oneLine = %q, want %q", got, "first; second")
	}
	if !errors.Is(err, base) {
		t.Error("oneLine does not wrap its argument")
	}
	if plain := errors.New("plain"); oneLine(plain) != plain {
		t.Error("oneLine rewrapped a one-line error")
	}
}
