package jsonfast

import (
	"encoding/json"
	"testing"
)

// benchBody is a Kubernetes object as a handler's request carries it.
var benchBody = []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{` +
	`"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"field\":\"value-1\"}}\n"},` +
	`"creationTimestamp":"2026-11-22T08:05:31Z","finalizers":["kopf.zalando.org/KopfFinalizerMarker"],` +
	`"generation":2,"managedFields":[{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":` +
	`{"f:spec":{".":{},"f:field":{}}},"manager":"bench","operation":"Update","time":"2026-11-22T08:05:31Z"}],` +
	`"name":"kopf-example-123","namespace":"bench-abc","resourceVersion":"123456",` +
	`"uid":"6a2c4f0e-0000-4000-8000-000000000001"},"spec":{"field":"value-2","replicas":3}}`)

// BenchmarkFast and BenchmarkStdlib compare the fast paths with
// encoding/json on a handler's usual values: its result, a log record's
// fields with the object's spec, a spec and a whole body decoded. Run them
// in wasm to see what matters there:
//
//	GOOS=wasip1 GOARCH=wasm go test -c -o jsonfast.wasm . && wazero run jsonfast.wasm -test.run XXX -test.bench .
func BenchmarkFast(b *testing.B) {
	run(b, func(v any) ([]byte, bool) { return Append(nil, v) }, Decode)
}

func BenchmarkStdlib(b *testing.B) {
	run(b, func(v any) ([]byte, bool) {
		out, err := json.Marshal(v)
		return out, err == nil
	}, func(data []byte) (any, bool) {
		var v any
		return v, json.Unmarshal(data, &v) == nil
	})
}

func run(b *testing.B, encode func(any) ([]byte, bool), decode func([]byte) (any, bool)) {
	body, _ := Decode(benchBody)
	spec := object(body.(map[string]any)["spec"].(map[string]any))
	for name, v := range map[string]any{
		"result": map[string]any{"message": "hello world"},
		"fields": map[string]any{"spec": spec, "name": "kopf-example-123", "count": int64(3)},
		"body":   body,
	} {
		b.Run("encode/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := encode(v); !ok {
					b.Fatal("not encoded")
				}
			}
		})
	}
	for name, in := range map[string][]byte{"spec": []byte(`{"field":"value-2","replicas":3}`), "body": benchBody} {
		b.Run("decode/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := decode(in); !ok {
					b.Fatal("not decoded")
				}
			}
		})
	}
}
