package kopf

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// BenchmarkHandle measures the SDK's share of one handler call natively:
// decode the request, build the context, run a trivial handler, encode the
// response. Handlers: noop returns nothing, result returns a message, spec
// decodes the body's spec into a map, decodespec into a struct
// (ctx.DecodeSpec), log writes one log record to the host.
func BenchmarkHandle(b *testing.B) {
	old := registered
	defer func() { registered = old }()
	registered = &registry{module: abi.ModuleInfo{Name: "bench"}}
	OnCreate("", "v1", "pods", func(*Context) (any, error) { return nil, nil }, ID("noop"))
	OnCreate("", "v1", "pods", func(*Context) (any, error) { return map[string]any{"message": "hello world"}, nil }, ID("result"))
	OnCreate("", "v1", "pods", func(c *Context) (any, error) { return len(c.Spec()), nil }, ID("spec"))
	OnCreate("", "v1", "pods", func(c *Context) (any, error) { c.Logger().Info("hello", "name", c.Name()); return nil, nil }, ID("log"))
	OnCreate("", "v1", "pods", func(c *Context) (any, error) {
		var spec struct {
			Field string `json:"field"`
		}
		err := c.DecodeSpec(&spec)
		return len(spec.Field), err
	}, ID("decodespec"))
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		for _, id := range []string{"noop", "result", "spec", "decodespec", "log"} {
			b.Run(fmt.Sprintf("%s/%dKB", id, size>>10), func(b *testing.B) {
				in := benchRequest(b, id, size)
				host := &recorder{}
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					host.calls = host.calls[:0]
					if _, err := registered.handleJSON(in, host); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchRequest is a request whose body is about size bytes.
func benchRequest(b *testing.B, handler string, size int) []byte {
	body := map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "kopf-example-1", "namespace": "default", "uid": "6a2c4f0e-0000-4000-8000-000000000001"},
		"spec":     map[string]any{"field": strings.Repeat("x", size-200)},
	}
	raw, _ := json.Marshal(body)
	in, err := json.Marshal(abi.Request{Handler: handler, Kind: abi.KindCreate, Reason: abi.ReasonCreate,
		Name: "kopf-example-1", Namespace: "default", Body: raw})
	if err != nil {
		b.Fatal(err)
	}
	return in
}
