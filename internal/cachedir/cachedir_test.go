package cachedir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
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
			left, removed, err := Prune(dir, tt.maxBytes)
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
	u, err := UsageOf(filepath.Join(t.TempDir(), "never"))
	if err != nil || u.Files != 0 || u.Bytes != 0 {
		t.Errorf("a missing folder: %+v, %v; want nothing and no error", u, err)
	}
	if _, _, err := Prune(filepath.Join(t.TempDir(), "never"), 0); err != nil {
		t.Errorf("pruning a missing folder: %v", err)
	}
}
