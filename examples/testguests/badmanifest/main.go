// Command badmanifest is a test guest whose manifest is valid JSON but breaks
// the ABI's rules (a handler without an id, an unknown kind, a permission
// without verbs); the host must refuse to load it.
package main

import "github.com/extism/go-pdk"

//go:wasmexport kopf_manifest
func manifest() int32 {
	pdk.OutputString(`{"abiVersion":1,"module":{"name":"badmanifest"},"handlers":[` +
		`{"kind":"create","resource":{"name":"kopfexamples"}},` +
		`{"id":"x","kind":"sometimes","resource":{"name":"kopfexamples"}}],` +
		`"permissions":{"kubernetes":[{"group":"","resource":"pods","verbs":[]}]}}`)
	return 0
}

//go:wasmexport kopf_handle
func handle() int32 {
	pdk.OutputString(`{"outcome":{"status":"success"}}`)
	return 0
}

func main() {}
