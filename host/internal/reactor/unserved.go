package reactor

import "github.com/kopf-wasm/kopf-wasm/abi"

// unservedOptions are what the host does not serve of a handler's
// options, each in the words the author sees in the warning.
func unservedOptions(h abi.HandlerSpec) []string {
	var out []string
	if h.Options.CancellationPolling > 0 {
		out = append(out, "cancellationPolling is not served: a daemon that does not exit when asked is not polled and "+
			"reported again; it is waited for, or its instance closed after its cancellationTimeout")
	}
	return out
}
