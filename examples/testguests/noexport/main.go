// Command noexport is a test guest with a valid manifest but no kopf_handle
// export; the host must refuse to load it.
package main

import "github.com/extism/go-pdk"

//go:wasmexport kopf_manifest
func manifest() int32 {
	pdk.OutputString(`{"abiVersion":1,"module":{"name":"noexport"},"handlers":[]}`)
	return 0
}

func main() {}
