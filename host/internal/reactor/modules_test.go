package reactor

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// A module declaring kinds the host does not serve yet loads with one
// warning per such handler, naming it and what is missing; served kinds
// (probe handlers among them) are not warned about.
func TestWarnUnserved(t *testing.T) {
	var buf bytes.Buffer
	o := &Operator{log: slog.New(slog.NewTextHandler(&buf, nil))}
	sel := &abi.ResourceSelector{Name: "kopfexamples"}
	var handlers []abi.HandlerSpec
	for _, k := range abi.Kinds() {
		h := abi.HandlerSpec{ID: "h_" + string(k), Kind: k}
		if !k.IsActivity() {
			h.Resource = sel
		}
		handlers = append(handlers, h)
	}
	o.warnUnserved([]abi.Manifest{{Module: abi.ModuleInfo{Name: "m"}, Handlers: handlers}})
	out := buf.String()
	if _, ok := unserved[abi.KindProbe]; ok {
		t.Error("probe handlers are served; they must not be listed as unserved")
	}
	for _, k := range abi.Kinds() {
		why, isUnserved := unserved[k]
		line := fmt.Sprintf("Handler 'h_%s' of module \\\"m\\\": %s", k, why)
		switch {
		case isUnserved && !strings.Contains(out, line):
			t.Errorf("no warning for the %s handler; want %q in:\n%s", k, line, out)
		case !isUnserved && strings.Contains(out, "'h_"+string(k)+"'"):
			t.Errorf("the %s handler is served but was warned about:\n%s", k, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.Contains(l, "level=WARN") {
			t.Errorf("not a warning: %s", l)
		}
	}
}

// cancellationPolling is served (the spawner polls a daemon that does not
// exit): no option of ABI v1 is warned about.
func TestWarnUnservedOptions(t *testing.T) {
	var buf bytes.Buffer
	o := &Operator{log: slog.New(slog.NewTextHandler(&buf, nil))}
	sel := &abi.ResourceSelector{Name: "kopfexamples"}
	m := []abi.Manifest{{Module: abi.ModuleInfo{Name: "m"}, Handlers: []abi.HandlerSpec{
		{ID: "watcher", Kind: abi.KindDaemon, Resource: sel, Options: abi.Options{CancellationPolling: 5}},
		{ID: "plain", Kind: abi.KindDaemon, Resource: sel},
	}}}
	o.warnUnserved(m)
	o.warnUnserved(m)
	if out := strings.TrimSpace(buf.String()); out != "" {
		t.Errorf("want no warnings, got:\n%s", out)
	}
}
