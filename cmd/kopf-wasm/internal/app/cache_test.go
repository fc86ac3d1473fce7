package app

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// inspect fills the compile cache in $KOPF_WASM_CACHE; cache shows it and
// cache prune empties it.
func TestCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv("KOPF_WASM_CACHE", root)
	if r := run(t.Context(), "", "inspect", wasmtest.Path(t, "kopfexample")); r.code != 0 {
		t.Fatalf("inspect: %+v", r)
	}
	r := run(t.Context(), "", "cache")
	wasmLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(root) + `/wasm +([0-9]+) +[0-9.]+ MiB$`)
	if m := wasmLine.FindStringSubmatch(r.out); r.code != 0 || m == nil || m[1] == "0" {
		t.Fatalf("cache after an inspect: %+v; want the compiled module in %s/wasm", r, root)
	}
	if !strings.Contains(r.out, root+"/modules  0") {
		t.Errorf("cache: %q; want an empty modules cache", r.out)
	}
	r = run(t.Context(), "", "cache", "prune", "--max-size", "0")
	if r.code != 0 || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(root)+`/wasm +0 +0 B$`).MatchString(r.out) ||
		!strings.Contains(r.errOut, root+"/wasm: removed ") {
		t.Errorf("cache prune --max-size 0: %+v; want the compile cache emptied", r)
	}
	r = run(t.Context(), "", "cache", "prune", "--max-size", "lots")
	if r.code != 2 || !strings.Contains(r.errOut, `--max-size "lots" is not a size`) {
		t.Errorf("a bad size: %+v; want a usage error", r)
	}
}
