package reactor

import "github.com/kopf-wasm/kopf-wasm/abi"

// unservedOptions are what the host does not serve of a handler's
// options, each in the words the author sees in the warning. The host
// serves every option of ABI v1 today; an option added to the ABI before
// the host serves it is listed here.
func unservedOptions(abi.HandlerSpec) []string { return nil }
