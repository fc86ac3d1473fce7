package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
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

// A convert handler that declares its versions (kopf.Versions) is called
// only between them: a review from or to another version fails with a
// message naming the declared ones, and the engine warns when the CRD
// serves a version the handler does not declare.
func TestConversionVersions(t *testing.T) {
	spec := abi.HandlerSpec{ID: "convert", Kind: abi.KindConvert, Resource: sel, Options: abi.Options{Versions: []string{"v1alpha1", "v1"}}}
	f := newFixture(t, []abi.HandlerSpec{spec}, defaults())
	f.mod.respond["convert"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`{"spec":{}}`)}, nil
	}
	tests := []struct {
		name, from, to string
		want           string // a substring of the failure; "" for success
	}{
		{"declared both ways", "v1alpha1", "kopf.dev/v1", ""},
		{"declared back", "v1", "kopf.dev/v1alpha1", ""},
		{"to an undeclared version", "v1", "kopf.dev/v2", "converts between v1alpha1, v1 (its declared versions), not to kopf.dev/v2"},
		{"from an undeclared version", "v2", "kopf.dev/v1", "not from kopf.dev/v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.mod.requests("convert"))
			w := httptest.NewRecorder()
			f.srv.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/m/convert", bytes.NewReader(conversionReview(tt.to, widget(tt.from, map[string]any{})))))
			var out apiextensionsv1.ConversionReview
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("answer %d: %s", w.Code, w.Body.String())
			}
			called := len(f.mod.requests("convert")) > before
			if tt.want == "" {
				if out.Response.Result.Status != "Success" || !called {
					t.Errorf("want the handler called and success, got called=%v %+v", called, out.Response.Result)
				}
				return
			}
			if out.Response.Result.Status != "Failure" || !strings.Contains(out.Response.Result.Message, tt.want) {
				t.Errorf("want a failure with %q, got %+v", tt.want, out.Response.Result)
			}
			if called {
				t.Error("the handler was called for an undeclared version")
			}
		})
	}

	// The CRD serves v2, which the handler does not declare: a warning.
	s := defaults()
	s.Listen, s.Managed = "127.0.0.1:0", "auto.kopf-wasm.dev"
	cluster := &fakeCluster{configs: map[string]json.RawMessage{}, served: map[string][]string{"kopfexamples.kopf.dev": {"v1alpha1", "v1", "v2"}}}
	var logs bytes.Buffer
	e := admission.New(admission.Options{Exec: f.exec, Registry: func() *registry.Registry { return f.reg }, Settings: s,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, cluster)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.Update(ctx); err != nil {
		t.Fatal(err)
	}
	if want := "CRD kopfexamples.kopf.dev serves v2, which handler 'convert' does not declare"; !strings.Contains(logs.String(), want) {
		t.Errorf("no warning %q in the log:\n%s", want, logs.String())
	}
	if _, ok := cluster.configs["crd/kopfexamples.kopf.dev"]; !ok {
		t.Error("the conversion was not set despite the warning")
	}
}
