package examplestest

import (
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestFieldsFilters: each handler runs for the objects and changes its
// filters let through, and only for those.
func TestFieldsFilters(t *testing.T) {
	const ns = "ex-filters"
	logs := operator(t, ns, "03-fields-filters")
	createObject(t, kopfexamples, ns, kex("gold", map[string]any{"tier": "gold", "team": "x"}, map[string]any{"size": "small"}))
	paused := kex("paused-gold", map[string]any{"tier": "gold"}, map[string]any{})
	paused["metadata"].(map[string]any)["annotations"] = map[string]any{"example.kopf.dev/paused": "true"}
	createObject(t, kopfexamples, ns, paused)
	createObject(t, kopfexamples, ns, kex("slvr", map[string]any{"tier": "slvr"}, map[string]any{}))

	status := func(name, id, want string) func() error {
		return hasString(t, kopfexamples, ns, name, want, "status", id, "message")
	}
	for _, c := range []struct{ name, id, want string }{
		{"gold", "gold", "gold tier, not paused"},
		{"gold", "teamed", "team x"},
		{"gold", "named", "short name"},
		{"gold", "resized/spec.size", "none -> small"},
	} {
		e2etest.Eventually(t, 30*time.Second, c.name+"/"+c.id, status(c.name, c.id, c.want))
	}
	mergePatch(t, kopfexamples, ns, "gold", `{"spec":{"size":"large"}}`)
	e2etest.Eventually(t, 30*time.Second, "resized", status("gold", "resized/spec.size", "small -> large"))
	e2etest.Eventually(t, 30*time.Second, "large", status("gold", "large/spec.size", "now large"))
	e2etest.Eventually(t, 5*time.Second, "logs", logged(logs, "size changed", "became large"))

	// The filtered-out objects: after the operator has seen them (the
	// named handler of slvr, created last, ran), none of the others did.
	e2etest.Eventually(t, 30*time.Second, "slvr", status("slvr", "named", "short name"))
	for _, c := range []struct{ name, id string }{
		{"paused-gold", "gold"}, {"paused-gold", "named"}, {"paused-gold", "teamed"}, {"paused-gold", "large/spec.size"},
		{"slvr", "gold"}, {"slvr", "teamed"}, {"slvr", "resized/spec.size"},
	} {
		if err := status(c.name, c.id, "<nil>")(); err != nil {
			t.Errorf("%s: handler %s ran: %v", c.name, c.id, err)
		}
	}
}
