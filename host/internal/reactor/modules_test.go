package reactor

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// A module declaring kinds the host does not serve yet loads with one
// warning per such handler, naming it and what is missing.
func TestWarnUnserved(t *testing.T) {
	var buf bytes.Buffer
	o := &Operator{log: slog.New(slog.NewTextHandler(&buf, nil))}
	sel := &abi.ResourceSelector{Name: "kopfexamples"}
	o.warnUnserved([]abi.Manifest{{Module: abi.ModuleInfo{Name: "m"}, Handlers: []abi.HandlerSpec{
		{ID: "create_fn", Kind: abi.KindCreate, Resource: sel},
		{ID: "by_owner", Kind: abi.KindIndex, Resource: sel},
		{ID: "health", Kind: abi.KindProbe},
	}}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two warnings, got:\n%s", buf.String())
	}
	for i, want := range []string{"Handler 'by_owner' of module \\\"m\\\": index handlers are not served yet", "Handler 'health' of module \\\"m\\\": probe handlers are not served yet"} {
		if !strings.Contains(lines[i], "level=WARN") || !strings.Contains(lines[i], want) {
			t.Errorf("warning %d = %s, want WARN with %s", i, lines[i], want)
		}
	}
}
