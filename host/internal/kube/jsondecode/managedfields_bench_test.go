package jsondecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// benchObject is a KopfExample as the scale bench leaves it, handled by
// kopf-wasm: 1,181 bytes of JSON, 689 of them managedFields (the bench's
// objects: 1,317 and 783).
const benchObject = `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"annotations":` +
	`{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"field\":\"value-00042\"}}\n"},` +
	`"creationTimestamp":"2026-11-24T06:24:03Z","finalizers":["kopf.zalando.org/KopfFinalizerMarker"],"generation":1,` +
	`"managedFields":[{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:field":{}}},` +
	`"manager":"bench","operation":"Update","time":"2026-11-24T06:24:03Z"},{"apiVersion":"kopf.dev/v1",` +
	`"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},` +
	`"f:kopf.zalando.org/last-handled-configuration":{}},"f:finalizers":{".":{},` +
	`"v:\"kopf.zalando.org/KopfFinalizerMarker\"":{}}}},"manager":"kopf-wasm","operation":"Update",` +
	`"time":"2026-11-24T06:24:04Z"},{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":` +
	`{".":{},"f:create_fn":{".":{},"f:message":{}}}},"manager":"kopf-wasm","operation":"Update",` +
	`"subresource":"status","time":"2026-11-24T06:24:04Z"}],"name":"bench-00042","namespace":"bench-scale",` +
	`"resourceVersion":"1234567","uid":"4b1e5f0c-8e0a-4a59-9d6e-2f7c1a0b3c4d"},"spec":{"field":"value-00042"},` +
	`"status":{"create_fn":{"message":"created"}}}`

// largeObject is a Deployment-like object with eight containers, written
// by three managers (server-side apply, a controller, the status writer).
var largeObject = func() string {
	var containers, fields []any
	cfields := map[string]any{".": map[string]any{}}
	for i := range 8 {
		name := fmt.Sprintf("container-%d", i)
		var env []any
		fenv := map[string]any{".": map[string]any{}}
		for j := range 6 {
			env = append(env, map[string]any{"name": fmt.Sprintf("ENV_%d", j), "value": fmt.Sprintf("value-%d-%d", i, j)})
			fenv[fmt.Sprintf(`k:{"name":"ENV_%d"}`, j)] = map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:value": map[string]any{}}
		}
		containers = append(containers, map[string]any{"name": name, "image": "registry.example.com/team/app:1.2." + fmt.Sprint(i),
			"env": env, "ports": []any{map[string]any{"containerPort": 8080 + i, "protocol": "TCP"}},
			"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}}})
		cfields[fmt.Sprintf(`k:{"name":"%s"}`, name)] = map[string]any{".": map[string]any{}, "f:env": fenv,
			"f:image": map[string]any{}, "f:name": map[string]any{}, "f:ports": map[string]any{}, "f:resources": map[string]any{}}
	}
	entry := func(manager, op, sub string, f map[string]any) map[string]any {
		e := map[string]any{"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": f, "manager": manager,
			"operation": op, "time": "2026-11-24T06:24:04Z"}
		if sub != "" {
			e["subresource"] = sub
		}
		return e
	}
	fields = append(fields,
		entry("kubectl", "Apply", "", map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": cfields}}}}),
		entry("kube-controller-manager", "Update", "", map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:deployment.kubernetes.io/revision": map[string]any{}}}}),
		entry("kube-controller-manager", "Update", "status", map[string]any{"f:status": map[string]any{"f:availableReplicas": map[string]any{}, "f:conditions": map[string]any{}, "f:replicas": map[string]any{}}}))
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "app", "namespace": "team", "uid": "9b1e5f0c-8e0a-4a59-9d6e-2f7c1a0b3c4d",
			"resourceVersion": "7654321", "generation": 12, "labels": map[string]any{"app": "app", "team": "team"},
			"managedFields": fields},
		"spec":   map[string]any{"replicas": 3, "template": map[string]any{"spec": map[string]any{"containers": containers}}},
		"status": map[string]any{"replicas": 3, "availableReplicas": 3}}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// managedFieldsBytes is the length of an object's managedFields in JSON.
func managedFieldsBytes(b *testing.B, object string) int {
	var obj struct {
		Metadata struct {
			ManagedFields json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(object), &obj); err != nil {
		b.Fatal(err)
	}
	return len(obj.Metadata.ManagedFields)
}

// BenchmarkManagedFields compares decoding with managedFields kept (and,
// as the host did before, dropped afterwards) against dropping them while
// parsing: a watch stream of 100 events, and a LIST of 1,000 objects
// (client-go's decoder, the dynamic client's, against the list decoder).
// retained-B/obj is what the decoded objects keep on the heap after a GC.
func BenchmarkManagedFields(b *testing.B) {
	for _, o := range []struct{ name, object string }{{"bench", benchObject}, {"large", largeObject}} {
		b.Logf("%s object: %d bytes, managedFields %d", o.name, len(o.object), managedFieldsBytes(b, o.object))
		var events strings.Builder
		for range 100 {
			events.WriteString(`{"type":"MODIFIED","object":` + o.object + "}\n")
		}
		stream := events.String()
		for _, drop := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/watch/drop=%v", o.name, drop), func(b *testing.B) {
				b.SetBytes(int64(len(stream)))
				b.ReportAllocs()
				for b.Loop() {
					benchDecode(b, NewWatchDecoder((strings.NewReader(stream)), WatchOptions{DropManagedFields: drop}), 100)
				}
			})
		}
		body := listBody(o.object, 1000)
		decoders := []struct {
			name   string
			decode func() []unstructured.Unstructured
		}{
			{"client-go+transform", func() []unstructured.Unstructured {
				obj, err := kruntime.Decode(unstructured.UnstructuredJSONScheme, body)
				if err != nil {
					b.Fatal(err)
				}
				list := obj.(*unstructured.UnstructuredList)
				for i := range list.Items {
					list.Items[i].SetManagedFields(nil)
				}
				return list.Items
			}},
			{"listDecoder/drop=false", func() []unstructured.Unstructured { return decodeListItems(b, body, false) }},
			{"listDecoder/drop=true", func() []unstructured.Unstructured { return decodeListItems(b, body, true) }},
		}
		for _, dec := range decoders {
			b.Run(o.name+"/list/"+dec.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					dec.decode()
				}
				b.ReportMetric(retained(dec.decode)/1000, "retained-B/obj")
			})
		}
	}
}

func listBody(object string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"1"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(object)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func decodeListItems(b *testing.B, body []byte, drop bool) []unstructured.Unstructured {
	list, err := DecodeList((bytes.NewReader(body)), drop)
	if err != nil {
		b.Fatal(err)
	}
	return list.Items
}

// retained returns how many bytes of heap what decode returns holds.
func retained(decode func() []unstructured.Unstructured) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	items := decode()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(items)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}
