package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/internal/webhookname"
)

// conversion answers a ConversionReview (apiextensions.k8s.io/v1) on the
// path of a convert handler: each object not yet in the desired version is
// converted by the handler (its result is the converted object), gets the
// desired apiVersion, and keeps its original metadata but for labels and
// annotations, which the handler may change (as the API server requires).
// Any failure fails the whole review, with the handler's message.
func (s *Server) conversion(r *http.Request, t target, data []byte) (*apiextensionsv1.ConversionReview, *protocolError) {
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, protocolErrorf(http.StatusBadRequest, "the body is not a ConversionReview: %v", err)
	}
	switch {
	case review.APIVersion != "apiextensions.k8s.io/v1":
		return nil, protocolErrorf(http.StatusBadRequest, "ConversionReview %q: want apiextensions.k8s.io/v1", review.APIVersion)
	case review.Request == nil || review.Request.UID == "":
		return nil, protocolErrorf(http.StatusBadRequest, "the ConversionReview has no request or no uid")
	case review.Request.DesiredAPIVersion == "":
		return nil, protocolErrorf(http.StatusBadRequest, "the ConversionReview names no desiredAPIVersion")
	case t.kind != "":
		return nil, protocolErrorf(http.StatusNotFound, "conversions are served on the paths of convert handlers, /<module>/<handler-id>")
	}
	h := findConverter(s.opts.Registry(), t)
	if h == nil {
		return nil, protocolErrorf(http.StatusNotFound, "%s is not loaded (or is no convert handler)", t)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.budget(r))
	defer cancel()
	req := review.Request
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	out := &apiextensionsv1.ConversionReview{TypeMeta: review.TypeMeta, Response: resp}
	for i, raw := range req.Objects {
		converted, err := s.convertOne(ctx, h, req, raw.Raw)
		if err != nil {
			s.log.Error(fmt.Sprintf("Handler '%s' did not convert object %d to %s: %v", h.ID(), i, req.DesiredAPIVersion, err),
				"handler", h.ID(), "module", h.Module)
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			return out, nil
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: converted})
	}
	return out, nil
}

// findConverter is the convert handler of the path.
func findConverter(reg *registry.Registry, t target) *registry.Handler {
	if reg == nil {
		return nil
	}
	var byServicePath *registry.Handler
	for _, ref := range reg.Resources() {
		for _, h := range reg.Handlers(ref, abi.KindConvert) {
			if h.Module == t.module && h.ID() == t.id {
				return h
			}
			if byServicePath == nil && t.names(h.Module, h.ID()) {
				byServicePath = h
			}
		}
	}
	return byServicePath
}

// convertOne converts one object.
func (s *Server) convertOne(ctx context.Context, h *registry.Handler, req *apiextensionsv1.ConversionRequest, raw []byte) ([]byte, error) {
	obj, err := objects.DecodeMap(raw)
	if err != nil || obj == nil {
		return nil, fmt.Errorf("an object of the review is not a JSON object: %v", err)
	}
	if obj["apiVersion"] == req.DesiredAPIVersion {
		return raw, nil
	}
	from, _ := obj["apiVersion"].(string)
	if err := checkVersions(h, from, req.DesiredAPIVersion); err != nil {
		return nil, err
	}
	subj := execution.NewSubject(h.Resource, false, &unstructured.Unstructured{Object: obj})
	in := execution.Input{Subject: subj, Conversion: &abi.ConversionRequest{UID: string(req.UID), DesiredAPIVersion: req.DesiredAPIVersion}}
	res, err := s.opts.Exec.Call(ctx, h, in, execution.CallOptions{})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("handler '%s' did not answer in time", h.ID())
	case err != nil:
		return nil, fmt.Errorf("handler '%s': %w", h.ID(), err)
	case res.Step.Err != nil:
		msg := res.Step.Err.Error()
		if res.Response != nil && res.Response.Outcome.Message != "" {
			msg = res.Response.Outcome.Message
		}
		return nil, fmt.Errorf("handler '%s' failed: %s", h.ID(), msg)
	case res.Response == nil || len(res.Response.Result) == 0:
		return nil, fmt.Errorf("handler '%s' returned no object", h.ID())
	}
	converted, err := objects.DecodeMap(res.Response.Result)
	if err != nil || converted == nil {
		return nil, fmt.Errorf("handler '%s' returned something other than an object: %.80s", h.ID(), res.Response.Result)
	}
	converted["apiVersion"] = req.DesiredAPIVersion
	if _, ok := converted["kind"]; !ok {
		converted["kind"] = obj["kind"]
	}
	meta, _ := obj["metadata"].(map[string]any)
	if newMeta, ok := converted["metadata"].(map[string]any); ok && meta != nil {
		for _, key := range []string{"labels", "annotations"} {
			if v, ok := newMeta[key]; ok {
				meta[key] = v
			}
		}
	}
	converted["metadata"] = meta
	return json.Marshal(converted)
}

// checkVersions fails a conversion from or to a version the handler does
// not declare (kopf.Versions); with none declared, every version is its.
func checkVersions(h *registry.Handler, from, to string) error {
	declared := h.Spec.Options.Versions
	if len(declared) == 0 {
		return nil
	}
	for _, c := range []struct{ dir, apiVersion string }{{"from", from}, {"to", to}} {
		_, version, _ := strings.Cut(c.apiVersion, "/")
		if !slices.Contains(declared, version) {
			return fmt.Errorf("handler '%s' converts between %s (its declared versions), not %s %s; add the version to kopf.Versions or stop serving it",
				h.ID(), strings.Join(declared, ", "), c.dir, c.apiVersion)
		}
	}
	return nil
}

// undeclaredVersions says which versions the CRD serves that the handler
// does not declare, or the other way round; "" when they agree or the
// handler declares none.
func undeclaredVersions(h *registry.Handler, crd string, served []string) string {
	declared := h.Spec.Options.Versions
	if len(declared) == 0 || len(served) == 0 {
		return ""
	}
	var notDeclared, notServed []string
	for _, v := range served {
		if !slices.Contains(declared, v) {
			notDeclared = append(notDeclared, v)
		}
	}
	for _, v := range declared {
		if !slices.Contains(served, v) {
			notServed = append(notServed, v)
		}
	}
	var parts []string
	if len(notDeclared) > 0 {
		parts = append(parts, fmt.Sprintf("serves %s, which handler '%s' does not declare (conversions from or to it will fail; add it to kopf.Versions)",
			strings.Join(notDeclared, ", "), h.ID()))
	}
	if len(notServed) > 0 {
		parts = append(parts, fmt.Sprintf("does not serve %s, which handler '%s' declares", strings.Join(notServed, ", "), h.ID()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "CRD " + crd + " " + strings.Join(parts, "; it ")
}

// conversionFor is the CRD's spec.conversion that points at a convert
// handler.
func conversionFor(h *registry.Handler, ep Endpoint) (crd string, conversion json.RawMessage, err error) {
	cc := map[string]any{"caBundle": ep.CABundle}
	if ep.Service != nil {
		svc := map[string]any{"namespace": ep.Service.Namespace, "name": ep.Service.Name, "path": ServicePath(h.Module, h.ID())}
		if ep.Service.Port != nil {
			svc["port"] = *ep.Service.Port
		}
		cc["service"] = svc
	} else {
		cc["url"] = ep.URL + webhookname.Path(h.Module, h.ID())
	}
	conversion, err = json.Marshal(map[string]any{
		"strategy": "Webhook",
		"webhook":  map[string]any{"clientConfig": cc, "conversionReviewVersions": []string{"v1"}},
	})
	return h.Resource.Plural + "." + h.Resource.Group, conversion, err
}
