package wasmrt

import "testing"

// BenchmarkTyped compares reading a handler's spec through the Go SDK's
// map (spec) with its typed access (decodespec: ctx.DecodeSpec into a
// struct; decode: kopf.Decode[T] of the map), in wasm, with
// examples/testguests/typed.
func BenchmarkTyped(b *testing.B) {
	for _, handler := range []string{"spec", "decodespec", "decode"} {
		for _, size := range []int{1 << 10, 64 << 10} {
			b.Run(handler+"/"+sizeName(size), func(b *testing.B) {
				m := load(b, newRuntime(b, Options{Logger: discardLogger()}), "typed")
				benchmarkCalls(b, m, request(handler, size))
			})
		}
	}
}
