package polyglottest

import (
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestKopfExample: Kopf's minimal example in every language, and the Go
// module built with TinyGo, makes the same outcomes as the Go module
// (examples/kopfexample): the create,
// update and delete handlers' messages under status.<id>, their log lines
// with the object's context, and a deletion that the delete handler's
// finalizer lets through once it has run.
func TestKopfExample(t *testing.T) {
	for _, m := range modules("kopfexample", "kopfexample", guestwasm.Rust, guestwasm.AssemblyScript, guestwasm.Python, guestwasm.TinyGo) {
		t.Run(m.lang, func(t *testing.T) {
			ns := "kex-" + m.lang
			logs := operator(t, ns, m.path(t))
			create(t, kopfexamples, ns, map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
				"metadata": map[string]any{"name": "kopf-example-1"}, "spec": map[string]any{"field": "value"}})
			e2etest.Eventually(t, 30*time.Second, "create", hasValue(t, kopfexamples, ns, "kopf-example-1", "hello world", "status", "create_fn", "message"))
			spec := "field:value" // Go's (either compiler's), Rust's and AssemblyScript's structured attribute
			if m.lang == guestwasm.Python {
				spec = "{'field': 'value'}" // Kopf's f-string of the spec
			}
			e2etest.Eventually(t, 10*time.Second, "create log", logged(logs, "And here we are! Creating", "handler=create_fn", spec))

			mergePatch(t, kopfexamples, ns, "kopf-example-1", `{"spec":{"field":"changed"}}`)
			e2etest.Eventually(t, 30*time.Second, "update", hasValue(t, kopfexamples, ns, "kopf-example-1", "updated", "status", "update_fn", "message"))
			e2etest.Eventually(t, 10*time.Second, "update log", logged(logs, "Updating", "handler=update_fn", "diff=1"))

			remove(t, kopfexamples, ns, "kopf-example-1")
			e2etest.Eventually(t, 30*time.Second, "delete", gone(t, kopfexamples, ns, "kopf-example-1"))
			e2etest.Eventually(t, 10*time.Second, "delete log", logged(logs, "Deleting", "handler=delete_fn", "name=kopf-example-1"))
		})
	}
}
