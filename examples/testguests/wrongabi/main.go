// Command wrongabi is a test guest that declares ABI version 2; the host
// (ABI v1) must refuse to load it.
package main

import "github.com/extism/go-pdk"

//go:wasmexport kopf_manifest
func manifest() int32 {
	pdk.OutputString(`{"abiVersion":2,"module":{"name":"wrongabi"},"handlers":[]}`)
	return 0
}

//go:wasmexport kopf_handle
func handle() int32 {
	pdk.OutputString(`{"outcome":{"status":"success"}}`)
	return 0
}

func main() {}
