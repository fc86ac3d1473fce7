package execution

import (
	"encoding/json"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// SelectRequest is the request that asks a module which of resources the
// callable selector of its handler spec takes (Kopf's fn(resource) ->
// bool; abi.CallSelect). The host asks at start and whenever discovery
// changes, before the handler serves anything.
func SelectRequest(spec abi.HandlerSpec, resources []abi.ResourceInfo) (*abi.Request, error) {
	if resources == nil {
		resources = []abi.ResourceInfo{}
	}
	body, err := json.Marshal(resources)
	if err != nil {
		return nil, fmt.Errorf("the callable selector of handler '%s': %w", spec.ID, err)
	}
	return &abi.Request{Call: abi.CallSelect, Handler: spec.ID, Kind: spec.Kind, Param: spec.Options.Param, Body: body}, nil
}

// Selected reads a module's answer to [SelectRequest] about n resources:
// one boolean per resource, in order.
func Selected(spec abi.HandlerSpec, resp *abi.Response, n int) ([]bool, error) {
	if resp.Outcome.Status != abi.OutcomeSuccess {
		return nil, fmt.Errorf("the callable selector of handler '%s' failed: %s: %s", spec.ID, resp.Outcome.Status, resp.Outcome.Message)
	}
	var picked []bool
	if err := json.Unmarshal(resp.Result, &picked); err != nil || len(picked) != n {
		return nil, fmt.Errorf("the callable selector of handler '%s' answered %s; want a list of %d booleans, one per resource", spec.ID, resp.Result, n)
	}
	return picked, nil
}
