package wasmrt

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCachedLoadDropsTheMappedRewrite: a module loaded from the compile
// cache maps its kept rewrite; once it is loaded, most of those pages are
// no longer resident (dropResident), and the module still serves calls,
// which read what they need again (issue 34: a standard-Go module's 4 MB
// stayed resident in every host).
func TestCachedLoadDropsTheMappedRewrite(t *testing.T) {
	dir := t.TempDir()
	wasm := guest(t, "good")
	if _, err := newRuntime(t, Options{CacheDir: dir}).Load(t.Context(), "good", wasm); err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Options{CacheDir: dir})
	m, err := r.Load(t.Context(), "good", wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := keptRewrite(t, r, wasm)
	size, rss := mappingRSS(t, path)
	if size == 0 {
		t.Fatalf("the kept rewrite %s is not mapped", path)
	}
	if rss > size/2 {
		t.Errorf("%d of the mapped rewrite's %d KiB are resident after the load, want at most half", rss, size)
	}
	if _, err := m.Handle(t.Context(), request("ok", 100), nil); err != nil {
		t.Fatal(err)
	}
}

// mappingRSS returns the size and the resident part, in KiB, of this
// process's mappings of the file at path (0, 0 when none).
func mappingRSS(t *testing.T, path string) (size, rss int64) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 { // a mapping's header
			in = len(fields) >= 6 && fields[len(fields)-1] == path
			continue
		}
		if !in || len(fields) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "Size:":
			size += n
		case "Rss:":
			rss += n
		}
	}
	return size, rss
}
