// Command admissionbench is the admission benchmarks' module: a trivial
// validating handler that admits everything, and a mutating one that adds
// a label, on objects labelled bench-mutate=yes only (its label filter is
// its webhook's objectSelector, so the API server calls it for those only).
package main

import (
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("admissionbench", "0.1.0")
	kopf.OnValidate("kopf.dev", "v1", "kopfexamples", allow, kopf.ID("allow"))
	kopf.OnMutate("kopf.dev", "v1", "kopfexamples", label, kopf.ID("label"),
		kopf.Labels(map[string]any{"bench-mutate": "yes"}))
}

func allow(*kopf.Context) (any, error) { return nil, nil }

func label(ctx *kopf.Context) (any, error) {
	ctx.Patch().Merge(map[string]any{"metadata": map[string]any{"labels": map[string]any{"mutated": "yes"}}})
	return nil, nil
}

func main() {}
