package indexing

import (
	"encoding/json"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
)

var _ execution.Indices = (*Engine)(nil)

// Carried returns the module's indexes as a request carries them: each
// encoded whole (the encoding is cached between changes) while it is at
// most Options.Inline bytes, else null for the guest to look up.
func (e *Engine) Carried(module string) map[string]json.RawMessage {
	s := e.current().sets[module]
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]json.RawMessage, len(s.indexes))
	for id, st := range s.indexes {
		if st.ix.Size() > e.opts.Inline {
			out[id] = json.RawMessage("null")
			continue
		}
		out[id] = st.ix.Encode()
	}
	return out
}

// Lookup answers an index look-up of one of the module's handlers: the
// values under the key, or with All the whole index.
func (e *Engine) Lookup(module string, req abi.IndexLookupRequest) abi.IndexLookupResponse {
	s := e.current().sets[module]
	var st *state
	if s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		st = s.indexes[req.Index]
	}
	if st == nil {
		return abi.IndexLookupResponse{Values: []json.RawMessage{}, Error: &abi.HostError{Code: 404, Reason: "NotFound",
			Message: fmt.Sprintf("module %q has no index %q; the index's name is its handler's id", module, req.Index), Origin: abi.OriginHost}}
	}
	if req.All {
		return abi.IndexLookupResponse{Values: []json.RawMessage{}, Index: st.ix.Encode()}
	}
	key, err := KeyOf(req.Key)
	if err != nil {
		return abi.IndexLookupResponse{Values: []json.RawMessage{}, Error: &abi.HostError{Code: 400, Reason: "BadRequest",
			Message: fmt.Sprintf("index %q: %v", req.Index, err), Origin: abi.OriginHost}}
	}
	values := st.ix.Lookup(key)
	if values == nil {
		values = []json.RawMessage{}
	}
	return abi.IndexLookupResponse{Values: values}
}
