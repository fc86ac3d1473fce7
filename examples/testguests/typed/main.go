// Command typed is a test guest for the benchmark of the Go SDK's typed
// access (host/internal/wasmrt BenchmarkTyped): three handlers read the
// same spec.field of a KopfExample
//
//   - "spec" through the map (ctx.Spec().String),
//   - "decodespec" into a struct with ctx.DecodeSpec,
//   - "decode" into a struct with kopf.Decode[T](ctx.Spec()),
//
// and return its length.
package main

import (
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

type spec struct {
	Field string `json:"field"`
}

var examples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}

func init() {
	kopf.Module("typed", "0.1.0")
	examples.OnCreate(func(ctx *kopf.Context) (any, error) {
		return len(ctx.Spec().String("field")), nil
	}, kopf.ID("spec"))
	examples.OnCreate(func(ctx *kopf.Context) (any, error) {
		var s spec
		err := ctx.DecodeSpec(&s)
		return len(s.Field), err
	}, kopf.ID("decodespec"))
	examples.OnCreate(func(ctx *kopf.Context) (any, error) {
		s, err := kopf.Decode[spec](ctx.Spec())
		return len(s.Field), err
	}, kopf.ID("decode"))
}

func main() {}
