package execution

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// Indices serve the indexes of modules (Kopf's @kopf.index) to every
// handler call: the indexing engine, which fills them. The executor puts
// a module's indexes into each request of its handlers (small ones whole,
// large ones as null, for the guest to look up) and answers the guests'
// index look-ups.
type Indices interface {
	// Carried returns the indexes a request of the module's handlers
	// carries, by id: each encoded whole, or JSON null when it is larger
	// than the settings allow (the guest then reads it with look-ups).
	// Nil when the module has none.
	Carried(module string) map[string]json.RawMessage
	// Lookup answers an index look-up of one of the module's handlers.
	Lookup(module string, req abi.IndexLookupRequest) abi.IndexLookupResponse
}

// ServeIndices makes the executor carry ix's indexes in requests and
// answer look-ups from them. Call it before the first call.
func (e *Executor) ServeIndices(ix Indices) { e.indices = ix }

// indicesFor fills in's indexes for a call of a module's handler.
func (e *Executor) indicesFor(module string, in *Input) {
	if in.Indices == nil && e.indices != nil {
		in.Indices = e.indices.Carried(module)
	}
}

// withIndices wraps a call's host functions so that the guest's index
// look-ups are answered from its module's indexes.
func (e *Executor) withIndices(module string, host wasmrt.Host) wasmrt.Host {
	if e.indices == nil {
		return host
	}
	return &indexHost{Host: host, module: module, ix: e.indices}
}

// indexHost answers index look-ups on top of another host.
type indexHost struct {
	wasmrt.Host
	module string
	ix     Indices
}

// IndexLookup answers from the module's indexes.
func (h *indexHost) IndexLookup(_ context.Context, req abi.IndexLookupRequest) abi.IndexLookupResponse {
	return h.ix.Lookup(h.module, req)
}

// LogAttrs forwards the wrapped host's log attributes (the processing
// cycle), so that guests' records keep them.
func (h *indexHost) LogAttrs() []slog.Attr {
	if la, ok := h.Host.(wasmrt.LogAttrser); ok {
		return la.LogAttrs()
	}
	return nil
}
