package admission

import (
	"encoding/json"
	"fmt"

	jsonpatch5 "github.com/evanphx/json-patch/v5"
	"gomodules.xyz/jsonpatch/v2"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// handlerPatch is one mutating handler's patch.
type handlerPatch struct {
	handler string
	patch   *abi.Patch
}

// mutation applies the handlers' patches one after the other (each its
// merge patch, then its JSON patch operations) to body, and returns the
// whole change as one RFC 6902 JSON patch against body: what the API
// server applies to the request's object. nil when nothing changed.
func mutation(body map[string]any, patches []handlerPatch) ([]byte, error) {
	original, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the object: %w", err)
	}
	doc := original
	for _, p := range patches {
		if doc, err = apply(doc, p.patch); err != nil {
			return nil, fmt.Errorf("handler '%s' returned a mutation that cannot be applied: %w", p.handler, err)
		}
	}
	ops, err := jsonpatch.CreatePatch(original, doc)
	if err != nil {
		return nil, fmt.Errorf("compute the mutation: %w", err)
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}

// apply applies one handler's patch to doc.
func apply(doc []byte, p *abi.Patch) ([]byte, error) {
	var err error
	if len(p.Merge) > 0 && string(p.Merge) != "null" {
		if doc, err = jsonpatch5.MergePatch(doc, p.Merge); err != nil {
			return nil, fmt.Errorf("merge patch: %w", err)
		}
	}
	if len(p.JSON) > 0 {
		raw, err := json.Marshal(p.JSON)
		if err != nil {
			return nil, err
		}
		ops, err := jsonpatch5.DecodePatch(raw)
		if err != nil {
			return nil, fmt.Errorf("JSON patch: %w", err)
		}
		if doc, err = ops.Apply(doc); err != nil {
			return nil, fmt.Errorf("JSON patch: %w", err)
		}
	}
	return doc, nil
}
