package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func TestPruneCache(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes int64
		left     []string
	}{
		{"under the bound", 1000, []string{"new", "old", "sub/mid"}},
		{"at the bound", 300, []string{"new", "old", "sub/mid"}},
		{"oldest first", 250, []string{"new", "sub/mid"}},
		{"down to one", 100, []string{"new"}},
		{"empty", 0, nil},
		{"no bound", -1, []string{"new", "old", "sub/mid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			base := time.Now().Add(-time.Hour)
			for i, name := range []string{"old", "sub/mid", "new"} {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, make([]byte, 100), 0o600); err != nil {
					t.Fatal(err)
				}
				mtime := base.Add(time.Duration(i) * time.Minute)
				if err := os.Chtimes(p, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			left, removed, err := PruneCache(dir, tt.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			files, _ := cacheFiles(dir)
			for _, f := range files {
				rel, _ := filepath.Rel(dir, f.path)
				names = append(names, filepath.ToSlash(rel))
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.left) {
				t.Errorf("left %v, want %v", names, tt.left)
			}
			if left.Files != len(tt.left) || left.Bytes != int64(100*len(tt.left)) || removed.Files != 3-len(tt.left) || removed.Bytes != int64(100*(3-len(tt.left))) {
				t.Errorf("reported left %+v, removed %+v", left, removed)
			}
		})
	}
}

func TestCacheUsageOfMissingFolder(t *testing.T) {
	u, err := CacheUsageOf(filepath.Join(t.TempDir(), "never"))
	if err != nil || u.Files != 0 || u.Bytes != 0 {
		t.Errorf("a missing folder: %+v, %v; want nothing and no error", u, err)
	}
	if _, _, err := PruneCache(filepath.Join(t.TempDir(), "never"), 0); err != nil {
		t.Errorf("pruning a missing folder: %v", err)
	}
}

// The runtime bounds its compile cache when it starts.
func TestRuntimeBoundsItsCache(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "wazero-v0.0.0-stale", "entry")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	s := settings.Default().Wasm
	s.CacheDir, s.CacheMaxBytes = dir, 1024
	rt, err := newRuntime(s, discardLogger)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close(t.Context()) }()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a 4 KiB entry in a cache bounded to 1 KiB is still there (%v)", err)
	}
}
