package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

func conversionReview(desired string, objs ...map[string]any) []byte {
	var raws []json.RawMessage
	for _, o := range objs {
		raw, _ := json.Marshal(o)
		raws = append(raws, raw)
	}
	data, _ := json.Marshal(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
		"request": map[string]any{"uid": "conv-1", "desiredAPIVersion": desired, "objects": raws}})
	return data
}

func widget(version string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/" + version, "kind": "KopfExample",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "uid": "u-1", "labels": map[string]any{"a": "b"}}, "spec": spec}
}

// A convert handler converts every object not in the desired version; the
// host sets the apiVersion and keeps the metadata but labels and
// annotations; a failure fails the review with the handler's message.
func TestConversion(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{{ID: "convert", Kind: abi.KindConvert, Resource: sel}}, defaults())
	f.mod.respond["convert"] = func(_ context.Context, req *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
		var obj map[string]any
		_ = json.Unmarshal(req.Body, &obj)
		spec := obj["spec"].(map[string]any)
		if spec["size"] == "broken" {
			return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomePermanent, Message: "cannot convert a broken size"}}, nil
		}
		if req.Conversion == nil || req.Conversion.DesiredAPIVersion != "kopf.dev/v2" || req.Kind != abi.KindConvert {
			return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomePermanent, Message: "bad request"}}, nil
		}
		out, _ := json.Marshal(map[string]any{"kind": "KopfExample", "spec": map[string]any{"replicas": len(spec["size"].(string))},
			"metadata": map[string]any{"name": "renamed", "labels": map[string]any{"converted": "yes"}}})
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: out}, nil
	}
	post := func(body []byte) apiextensionsv1.ConversionReview {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/m/convert", bytes.NewReader(body))
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		var out apiextensionsv1.ConversionReview
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != 200 || out.Response == nil || out.Response.UID != "conv-1" {
			t.Fatalf("answer %d: %s", w.Code, w.Body.String())
		}
		return out
	}
	out := post(conversionReview("kopf.dev/v2", widget("v1", map[string]any{"size": "abc"}), widget("v2", map[string]any{"replicas": 7})))
	if out.Response.Result.Status != "Success" || len(out.Response.ConvertedObjects) != 2 {
		t.Fatalf("response %+v", out.Response)
	}
	var first, second map[string]any
	_ = json.Unmarshal(out.Response.ConvertedObjects[0].Raw, &first)
	_ = json.Unmarshal(out.Response.ConvertedObjects[1].Raw, &second)
	meta := first["metadata"].(map[string]any)
	if first["apiVersion"] != "kopf.dev/v2" || first["spec"].(map[string]any)["replicas"] != float64(3) ||
		meta["name"] != "w" || meta["uid"] != "u-1" || meta["labels"].(map[string]any)["converted"] != "yes" {
		t.Errorf("converted %v", first)
	}
	if second["spec"].(map[string]any)["replicas"] != float64(7) {
		t.Errorf("an object already in the version changed: %v", second)
	}
	out = post(conversionReview("kopf.dev/v2", widget("v1", map[string]any{"size": "broken"})))
	if out.Response.Result.Status != "Failure" || !strings.Contains(out.Response.Result.Message, "cannot convert a broken size") ||
		len(out.Response.ConvertedObjects) != 0 {
		t.Errorf("failure %+v", out.Response)
	}

	// The managed configuration points the CRD at the handler.
	s := defaults()
	s.Listen, s.Managed = "127.0.0.1:0", "auto.kopf-wasm.dev"
	cluster := &fakeCluster{configs: map[string]json.RawMessage{}}
	e := newEngine(t, func() *registry.Registry { return f.reg }, s, cluster)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	var conv apiextensionsv1.CustomResourceConversion
	if err := json.Unmarshal(cluster.configs["crd/kopfexamples.kopf.dev"], &conv); err != nil {
		t.Fatal(err)
	}
	if conv.Strategy != apiextensionsv1.WebhookConverter || *conv.Webhook.ClientConfig.URL != e.URL()+"/m/convert" ||
		len(conv.Webhook.ClientConfig.CABundle) == 0 || conv.Webhook.ConversionReviewVersions[0] != "v1" {
		t.Errorf("conversion %+v", conv)
	}
}
