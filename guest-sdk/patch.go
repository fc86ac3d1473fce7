package kopf

import (
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Patch collects a handler's changes to its object: a JSON merge patch
// (RFC 7396) built with [Patch.Set], [Patch.Unset] and [Patch.Merge], and
// JSON patch operations (RFC 6902) that the host applies after it. The zero
// Patch is empty and ready to use.
type Patch struct {
	merge map[string]any
	ops   []patchOp
}

type patchOp struct {
	op, path, from string
	value          any
	hasValue       bool
}

// Set sets the value at a dotted path ("metadata.labels.x"), creating the
// objects on the way. Use [Patch.SetKeys] when a key contains dots.
func (p *Patch) Set(path string, value any) { p.SetKeys(splitPath(path), value) }

// SetKeys sets the value at the path given as keys.
func (p *Patch) SetKeys(keys []string, value any) {
	if len(keys) == 0 {
		return
	}
	if p.merge == nil {
		p.merge = map[string]any{}
	}
	m := p.merge
	for _, k := range keys[:len(keys)-1] {
		m = ensureMap(m, k)
	}
	m[keys[len(keys)-1]] = value
}

// Unset removes the field at a dotted path (a null in the merge patch).
func (p *Patch) Unset(path string) { p.Set(path, nil) }

// Merge deep-merges a fragment into the merge patch.
func (p *Patch) Merge(fragment map[string]any) {
	if p.merge == nil {
		p.merge = map[string]any{}
	}
	mergeInto(p.merge, fragment)
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sub := asObject(v); sub != nil {
			mergeInto(ensureMap(dst, k), sub)
			continue
		}
		dst[k] = v
	}
}

// Add appends an RFC 6902 "add" at a JSON pointer ("/spec/items/-").
func (p *Patch) Add(pointer string, value any) { p.op("add", pointer, "", value, true) }

// Replace appends an RFC 6902 "replace".
func (p *Patch) Replace(pointer string, value any) { p.op("replace", pointer, "", value, true) }

// Remove appends an RFC 6902 "remove".
func (p *Patch) Remove(pointer string) { p.op("remove", pointer, "", nil, false) }

// Test appends an RFC 6902 "test": the patch fails unless the value is there.
func (p *Patch) Test(pointer string, value any) { p.op("test", pointer, "", value, true) }

// Move appends an RFC 6902 "move".
func (p *Patch) Move(from, pointer string) { p.op("move", pointer, from, nil, false) }

// Copy appends an RFC 6902 "copy".
func (p *Patch) Copy(from, pointer string) { p.op("copy", pointer, from, nil, false) }

func (p *Patch) op(op, path, from string, value any, hasValue bool) {
	p.ops = append(p.ops, patchOp{op: op, path: path, from: from, value: value, hasValue: hasValue})
}

// Empty reports whether the patch changes nothing.
func (p *Patch) Empty() bool { return len(p.merge) == 0 && len(p.ops) == 0 }

// encode builds the ABI's patch, nil when empty.
func (p *Patch) encode() (*abi.Patch, error) {
	if p.Empty() {
		return nil, nil
	}
	out := &abi.Patch{}
	if len(p.merge) > 0 {
		raw, err := marshal(p.merge)
		if err != nil {
			return nil, fmt.Errorf("kopf: encode the merge patch: %w", err)
		}
		out.Merge = raw
	}
	for _, o := range p.ops {
		op := abi.JSONPatchOp{Op: o.op, Path: o.path, From: o.from}
		if o.hasValue {
			raw, err := marshal(o.value)
			if err != nil {
				return nil, fmt.Errorf("kopf: encode the %s at %s: %w", o.op, o.path, err)
			}
			op.Value = raw
		}
		out.JSON = append(out.JSON, op)
	}
	return out, nil
}
