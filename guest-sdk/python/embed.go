// Package python holds the pure-Python side of kopf-wasm's Python guests:
// the kopf package (Kopf's API on the ABI), the kubernetes client shim,
// and the runtime's boot script.
package python

import "embed"

// FS holds kopf/, kubernetes/ and runtime/_kopf_boot.py: the Python files
// that the CLI bundles into every Python module beside the author's files.
// Tests and __pycache__ are not in it.
//
//go:embed kopf/*.py kubernetes/*.py kubernetes/client/*.py kubernetes/config/*.py runtime/_kopf_boot.py
var FS embed.FS
