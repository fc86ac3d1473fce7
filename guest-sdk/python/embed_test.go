package python

import (
	"io/fs"
	"strings"
	"testing"
)

// FS holds the package's Python files, those starting with "_" included,
// and neither tests nor caches.
func TestFS(t *testing.T) {
	var files []string
	if err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(files, " ")
	for _, want := range []string{"kopf/__init__.py", "kopf/_runtime.py", "kopf/testing.py",
		"kubernetes/client/__init__.py", "kubernetes/config/__init__.py", "runtime/_kopf_boot.py"} {
		if !strings.Contains(all, want) {
			t.Errorf("FS lacks %s: %s", want, all)
		}
	}
	for _, bad := range []string{"tests/", "__pycache__", ".pyc"} {
		if strings.Contains(all, bad) {
			t.Errorf("FS holds %s: %s", bad, all)
		}
	}
}
