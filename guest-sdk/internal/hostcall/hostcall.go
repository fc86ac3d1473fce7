// Package hostcall is the one place of the guest SDK that touches wasm. On
// GOOS=wasip1 it exports the module's entry points (abi.ExportManifest and
// abi.ExportHandle) and calls the host functions of abi.HostNamespace
// through go-pdk's kernel memory; on other platforms it holds only the
// types below, so that the SDK and kopftest build and test natively.
//
// The kopf package calls [Serve] from its init to say what the exports
// serve; kopftest calls [Served] to drive the same entry points natively
// with a fake [Host].
package hostcall

// Host calls the host functions of the ABI by name.
type Host interface {
	// Call sends a JSON request to the host function fn (one of the abi.Host*
	// names) and returns its JSON reply, or nil when the function has none.
	Call(fn string, request []byte) []byte
}

// Module is what the guest exports serve.
type Module struct {
	// Manifest returns the module's abi.Manifest as JSON.
	Manifest func() ([]byte, error)
	// Handle runs one abi.Request (JSON) against host and returns the
	// abi.Response (JSON). An error is a failure of the module, not of a
	// handler: the export reports it and returns a non-zero code.
	Handle func(request []byte, host Host) ([]byte, error)
}

var served Module

// Serve sets what the exports serve. It is called once, from an init.
func Serve(m Module) { served = m }

// Served returns what [Serve] set.
func Served() Module { return served }
