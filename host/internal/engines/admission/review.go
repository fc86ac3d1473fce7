package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// review answers one admission request for the handlers of t.
func (s *Server) review(r *http.Request, t target, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, *protocolError) {
	reg := s.opts.Registry()
	if reg == nil {
		return nil, protocolErrorf(http.StatusNotFound, "no modules are loaded")
	}
	ref := abi.ResourceRef{Group: req.Resource.Group, Version: req.Resource.Version, Plural: req.Resource.Resource}
	candidates, perr := s.candidates(reg, ref, t)
	if perr != nil {
		return nil, perr
	}
	body, old, perr := decodeObjects(req)
	if perr != nil {
		return nil, perr
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.budget(r))
	defer cancel()

	subj := execution.NewSubject(candidates[0].Resource, false, &unstructured.Unstructured{Object: body})
	// The memo is the module's memo of the object (the executor's), or
	// the operator memo for an object being created, whose memo is not
	// kept (Kopf's ephemeral memory).
	var memo json.RawMessage
	if s.opts.Memo != nil && req.Operation != admissionv1.Create {
		memo = s.opts.Memo(candidates[0].Resource, req.Namespace, req.Name)
	}
	in := execution.Input{
		Subject: subj, Memo: memo, EphemeralMemo: req.Operation == admissionv1.Create,
		Admission: &execution.AdmissionInput{
			Request: abi.AdmissionRequest{
				UID: string(req.UID), Operation: string(req.Operation), Subresource: req.SubResource,
				DryRun: req.DryRun != nil && *req.DryRun, UserInfo: encodeUserInfo(req.UserInfo),
				Headers: r.Header.Clone(),
			},
			Old: old, Raw: bodyRaw(req), OldRaw: rawOrNil(req.OldObject.Raw),
		},
	}
	selected, err := s.selectHandlers(ctx, candidates, req, in)
	if err != nil {
		// A callback filter that could not run: Kopf's filters raise, and the
		// review fails as a handler's arbitrary error would.
		s.log.Error(fmt.Sprintf("Admission %s: %v", t, err), subj.Attrs()...)
		return denied(req.UID, http.StatusInternalServerError, err.Error(), nil), nil
	}
	verdicts := s.call(ctx, selected, in)
	return s.respond(req, body, verdicts), nil
}

// budget is how long the review's handler calls may take: the API
// server's timeout (or the settings'), less the margin.
func (s *Server) budget(r *http.Request) time.Duration {
	timeout := time.Duration(s.opts.Settings.TimeoutSeconds) * time.Second
	if q := r.URL.Query().Get("timeout"); q != "" {
		if d, err := time.ParseDuration(q); err == nil && d > 0 {
			timeout = d
		}
	}
	return timeout - min(s.opts.Settings.TimeoutMargin, timeout/2)
}

// candidates are the handlers of the path that serve the request's
// resource; a path or a resource this server does not serve is a 404.
func (s *Server) candidates(reg *registry.Registry, ref abi.ResourceRef, t target) ([]*registry.Handler, *protocolError) {
	if t.kind != "" {
		out := reg.Handlers(ref, t.kind)
		if len(out) == 0 {
			return nil, protocolErrorf(http.StatusNotFound, "no %s handler serves %s", t.kind, resourceString(ref))
		}
		return out, nil
	}
	hooks := reg.Handlers(ref, abi.KindValidate, abi.KindMutate)
	for _, h := range hooks { // the exact path first
		if h.Module == t.module && h.ID() == t.id {
			return []*registry.Handler{h}, nil
		}
	}
	for _, h := range hooks {
		if t.names(h.Module, h.ID()) {
			return []*registry.Handler{h}, nil
		}
	}
	for _, other := range reg.Resources() {
		for _, h := range reg.Handlers(other, abi.KindValidate, abi.KindMutate) {
			if t.names(h.Module, h.ID()) {
				return nil, protocolErrorf(http.StatusNotFound, "%s serves %s, not %s", t, resourceString(other), resourceString(ref))
			}
		}
	}
	return nil, protocolErrorf(http.StatusNotFound, "%s is not loaded (or is no webhook)", t)
}

func resourceString(ref abi.ResourceRef) string {
	if ref.Group == "" {
		return ref.Plural + "." + ref.Version
	}
	return ref.Plural + "." + ref.Version + "." + ref.Group
}

// decodeObjects decodes the object and the old object. The filters and
// the handlers' body are the object, or on DELETE the old object.
func decodeObjects(req *admissionv1.AdmissionRequest) (body, old map[string]any, perr *protocolError) {
	var err error
	if old, err = decodeObject(req.OldObject.Raw); err != nil {
		return nil, nil, protocolErrorf(http.StatusBadRequest, "the request's oldObject: %v", err)
	}
	if body, err = decodeObject(req.Object.Raw); err != nil {
		return nil, nil, protocolErrorf(http.StatusBadRequest, "the request's object: %v", err)
	}
	if body == nil {
		body = old
	}
	if body == nil {
		return nil, nil, protocolErrorf(http.StatusBadRequest, "the request has neither an object nor an oldObject")
	}
	return body, old, nil
}

// bodyRaw is the JSON of the handlers' body as the review carried it: the
// object, or on DELETE the old object (see decodeObjects).
func bodyRaw(req *admissionv1.AdmissionRequest) json.RawMessage {
	if raw := rawOrNil(req.Object.Raw); raw != nil {
		return raw
	}
	return rawOrNil(req.OldObject.Raw)
}

// rawOrNil is raw, or nil when it is empty or null.
func rawOrNil(raw []byte) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func decodeObject(raw []byte) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	return objects.DecodeMap(raw)
}

func encodeUserInfo(u any) json.RawMessage {
	raw, err := json.Marshal(u)
	if err != nil {
		return nil
	}
	return raw
}

// selectHandlers applies Kopf's selection: operation, subresource,
// mutating handlers skipped on DELETE unless they ask for it, filters on
// the body, the callback filter last (it sees the review, as Kopf's when=
// gets the webhook's kwargs).
func (s *Server) selectHandlers(ctx context.Context, candidates []*registry.Handler, req *admissionv1.AdmissionRequest,
	in execution.Input) ([]*registry.Handler, error) {
	op := string(req.Operation)
	var out []*registry.Handler
	var when registry.WhenFunc
	for _, h := range candidates {
		ops := h.Spec.Options.Operations
		switch {
		case len(ops) > 0 && !slices.Contains(ops, op):
			continue
		case h.Kind() == abi.KindMutate && req.Operation == admissionv1.Delete && !slices.Contains(ops, op):
			continue
		case !subresourceMatches(h.Spec.Options.Subresource, req.SubResource):
			continue
		case !h.MatchesBody(in.Subject.Object.Object):
			continue
		}
		if h.NeedsWhen() {
			if when == nil {
				when = s.opts.Exec.AdmissionWhen(ctx, in)
			}
			ok, err := when(h, nil)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, h)
	}
	return out, nil
}

// subresourceMatches is Kopf's subresource= check: none selects the main
// resource, "*" everything, a name that subresource.
func subresourceMatches(want, got string) bool {
	return want == "*" || want == got
}

// verdict is what one handler's call came to.
type verdict struct {
	h        *registry.Handler
	allowed  bool
	code     int
	message  string
	rank     int // which failure Kopf reports: higher wins
	warnings []string
	patch    *abi.Patch
}

// Ranks of failures, as Kopf picks the one to report.
const (
	rankOther = iota + 1
	rankTemporary
	rankPermanent
	rankAdmission
)

// call runs the selected handlers at once and returns their verdicts in
// registration order.
//
// The last handler runs on the request's own goroutine: with one handler,
// the usual case of a handler's own path, no goroutine is started, and the
// call runs on a stack that the request has grown already (a new
// goroutine's stack grew, by copying, on every review).
func (s *Server) call(ctx context.Context, handlers []*registry.Handler, in execution.Input) []verdict {
	out := make([]verdict, len(handlers))
	if len(handlers) == 0 {
		return out
	}
	var wg sync.WaitGroup
	last := len(handlers) - 1
	for i, h := range handlers[:last] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = s.callOne(ctx, h, in)
		}()
	}
	out[last] = s.callOne(ctx, handlers[last], in)
	wg.Wait()
	return out
}

func (s *Server) callOne(ctx context.Context, h *registry.Handler, in execution.Input) verdict {
	host := s.opts.Exec.Host(in.Subject)
	if in.Admission.Request.DryRun && !h.Spec.Options.SideEffects {
		host = dryRunHost{Host: host, handler: h.ID()}
	}
	attrs := append(in.Subject.Attrs(), "handler", h.ID(), "module", h.Module, "operation", in.Admission.Request.Operation)
	res, err := s.opts.Exec.Call(ctx, h, in, execution.CallOptions{Host: host})
	if err == nil && res.CallErr != nil {
		err = res.CallErr // the guest trapped, ran out of time or memory, or answered garbage
	}
	if err != nil {
		return s.unanswered(h, err, attrs)
	}
	v := verdict{h: h, allowed: true}
	resp := res.Response
	var adm *abi.AdmissionResponse
	if resp != nil {
		adm = resp.Admission
		v.patch = resp.Patch
		if adm != nil {
			v.warnings = adm.Warnings
		}
	}
	var ignored *execution.IgnoredError
	switch err := res.Step.Err; {
	case err == nil || errors.As(err, &ignored):
		if adm != nil && !adm.Allowed { // denied without an error outcome
			v.allowed, v.code, v.message, v.rank = false, adm.Code, adm.Message, rankAdmission
		}
	default:
		v.allowed, v.message, v.rank = false, err.Error(), rankOther
		var temp *execution.TemporaryError
		var perm *execution.PermanentError
		switch {
		case resp != nil && resp.Outcome.Code != 0:
			v.code, v.rank = resp.Outcome.Code, rankAdmission
		case errors.As(err, &perm):
			v.rank = rankPermanent
			if perm.Err != nil {
				v.rank = rankOther // an arbitrary error in the permanent mode
			}
		case errors.As(err, &temp):
			v.rank = rankTemporary
		}
		if resp != nil && resp.Outcome.Message != "" {
			v.message = resp.Outcome.Message
		}
		if adm != nil && !adm.Allowed && adm.Message != "" {
			v.message = adm.Message
			if adm.Code != 0 {
				v.code = adm.Code
			}
		}
	}
	if v.code == 0 && !v.allowed {
		v.code = http.StatusInternalServerError
	}
	if v.allowed {
		s.log.Debug(fmt.Sprintf("Handler '%s' allowed the admission.", h.ID()), attrs...)
	} else {
		s.log.Info(fmt.Sprintf("Handler '%s' denied the admission (%d): %s", h.ID(), v.code, v.message), attrs...)
	}
	return v
}

// unanswered is the verdict of a handler whose call did not complete: it
// ran past the review's time, trapped, ran out of memory, answered
// something that is not a response, or its module was unloaded. Its
// failure policy answers, as the API server's would for a webhook that
// fails: Ignore allows (with a warning), Fail denies with a 500.
func (s *Server) unanswered(h *registry.Handler, err error, attrs []any) verdict {
	reason := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		reason = "it did not answer in time"
	}
	if h.Spec.Options.IgnoreFailures {
		s.log.Error(fmt.Sprintf("Handler '%s' failed (%s); the admission is allowed by its failure policy Ignore.", h.ID(), reason), attrs...)
		return verdict{h: h, allowed: true, warnings: []string{
			fmt.Sprintf("admission handler '%s' of module %s failed (%s) and was ignored", h.ID(), h.Module, reason)}}
	}
	s.log.Error(fmt.Sprintf("Handler '%s' failed (%s); the admission is denied by its failure policy Fail.", h.ID(), reason), attrs...)
	return verdict{h: h, code: http.StatusInternalServerError, rank: rankOther,
		message: fmt.Sprintf("admission handler '%s' of module %s failed: %s", h.ID(), h.Module, reason)}
}

// respond folds the verdicts into the response: denied by the
// highest-ranked failure (the first of equals), warnings of all, and the
// mutating handlers' patches as one JSONPatch.
func (s *Server) respond(req *admissionv1.AdmissionRequest, body map[string]any, verdicts []verdict) *admissionv1.AdmissionResponse {
	var warnings []string
	var worst *verdict
	for i := range verdicts {
		v := &verdicts[i]
		warnings = append(warnings, v.warnings...)
		if !v.allowed && (worst == nil || v.rank > worst.rank) {
			worst = v
		}
	}
	if worst != nil {
		return denied(req.UID, worst.code, worst.message, warnings)
	}
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true, Warnings: warnings}
	var patches []handlerPatch
	for _, v := range verdicts {
		if v.patch == nil {
			continue
		}
		if v.h.Kind() != abi.KindMutate {
			s.log.Warn(fmt.Sprintf("Handler '%s' is a validating handler; its patch is ignored (only mutating handlers mutate).", v.h.ID()),
				"handler", v.h.ID(), "module", v.h.Module)
			continue
		}
		patches = append(patches, handlerPatch{handler: v.h.ID(), patch: v.patch})
	}
	if len(patches) == 0 {
		return resp
	}
	if len(req.Object.Raw) == 0 || string(req.Object.Raw) == "null" {
		s.log.Warn("a mutation of a request without an object (DELETE) is ignored", "handlers", len(patches))
		return resp
	}
	ops, err := mutation(body, patches)
	if err != nil {
		s.log.Error(fmt.Sprintf("Admission denied: %v", err))
		return denied(req.UID, http.StatusInternalServerError, err.Error(), warnings)
	}
	if ops != nil {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = ops, &pt
	}
	return resp
}

func denied(uid types.UID, code int, message string, warnings []string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: uid, Allowed: false, Warnings: warnings,
		Result: &metav1.Status{Status: metav1.StatusFailure, Code: int32(code), Message: message}}
}

// dryRunHost refuses the Kubernetes writes of a handler that does not
// declare side effects during a dry run.
type dryRunHost struct {
	wasmrt.Host
	handler string
}

func (h dryRunHost) Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse {
	switch req.Verb {
	case abi.VerbGet, abi.VerbList:
		return h.Host.Kube(ctx, req)
	}
	return abi.KubeResponse{Error: &abi.HostError{Code: http.StatusForbidden, Message: fmt.Sprintf(
		"dry run: handler '%s' declares no side effects, so its %s requests are refused", h.handler, req.Verb)}}
}
