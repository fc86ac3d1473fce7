package polyglottest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// oneFunctionTwoResources is Kopf's stacked decorators of one kind on one
// function, each for another resource, told apart by param: unchanged
// Kopf code, which kopf-wasm serves with one id and an entry per resource.
const oneFunctionTwoResources = `import kopf


@kopf.on.create('kopfexamples', param='kex')
@kopf.on.create('v1', 'configmaps', param='cm')
def created(param, patch, **_):
    patch.metadata.annotations['created-by'] = param
`

// TestPythonOneFunctionTwoResources: a Python function under two
// @kopf.on.create decorators for two resources, with no id=, handles the
// objects of both on the control plane, each with its own param.
func TestPythonOneFunctionTwoResources(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twores")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handlers.py"), []byte(oneFunctionTwoResources), 0o644); err != nil {
		t.Fatal(err)
	}
	const ns = "py-two-resources"
	operator(t, ns, guestwasm.Build(t, guestwasm.Python, dir))
	create(t, kopfexamples, ns, map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "kex-1"}, "spec": map[string]any{"field": "value"}})
	create(t, configmaps, ns, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm-1"}, "data": map[string]any{"k": "v"}})
	e2etest.Eventually(t, 60*time.Second, "the KopfExample handled", hasValue(t, kopfexamples, ns, "kex-1", "kex", "metadata", "annotations", "created-by"))
	e2etest.Eventually(t, 60*time.Second, "the ConfigMap handled", hasValue(t, configmaps, ns, "cm-1", "cm", "metadata", "annotations", "created-by"))
}
