package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Options configure a [Server].
type Options struct {
	// Exec calls the handlers. Required.
	Exec *execution.Executor
	// Registry returns the handlers the host serves now (it changes with
	// module swaps). Required.
	Registry func() *registry.Registry
	// Memo, when set, overrides the memo of an object that is not being
	// created (tests). Unset, handlers get their module's memo of the
	// object as the executor keeps it (execution.Memos).
	Memo func(ref abi.ResourceRef, namespace, name string) json.RawMessage
	// Settings are the admission settings.
	Settings settings.Admission
	// Logger receives the server's logs. Default slog.Default().
	Logger *slog.Logger
}

// Server answers AdmissionReviews; it is an http.Handler (see the package
// documentation for its paths and semantics). It is safe for concurrent
// use.
type Server struct {
	opts Options
	log  *slog.Logger
}

// NewServer returns a server for the handlers opts.Registry returns.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{opts: opts, log: opts.Logger}
}

// Paths of the servers that serve every handler of a kind.
const (
	PathValidate = "/validate"
	PathMutate   = "/mutate"
)

// ServicePath is the path of a handler for a webhook reached through a
// Service: the API server requires each segment of a Service's path to be
// a DNS-1123 subdomain, so the module and each part of the id are lower
// case, with any character other than a letter, a digit, "-" or "."
// replaced by "-" (Kopf's ids are function names: "check_field" becomes
// "check-field"). The server answers it as [webhookname.Path]; of two handlers
// of a module whose ids make the same path, the first registered answers.
func ServicePath(module, id string) string {
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = dnsSegment(p)
	}
	return "/" + dnsSegment(module) + "/" + strings.Join(parts, "/")
}

// dnsSegment makes s a DNS-1123 subdomain: lower case letters, digits,
// "-" and ".", starting and ending with a letter or a digit ("x" when
// nothing is left).
func dnsSegment(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), "-.")
	if out == "" {
		return "x"
	}
	return out
}

// names reports whether t names the handler h of module, by its path or by
// its Service path.
func (t target) names(module, id string) bool {
	if t.kind != "" {
		return false
	}
	if module == t.module && id == t.id {
		return true
	}
	return ServicePath(module, id) == "/"+t.module+"/"+t.id
}

// target is what a path names: one handler of a module, or every handler
// of a kind.
type target struct {
	module, id string
	kind       abi.HandlerKind // set for the paths of a kind
}

func parsePath(path string) (target, bool) {
	switch path {
	case PathValidate:
		return target{kind: abi.KindValidate}, true
	case PathMutate:
		return target{kind: abi.KindMutate}, true
	}
	module, id, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || module == "" || id == "" {
		return target{}, false
	}
	return target{module: module, id: id}, true
}

func (t target) String() string {
	if t.kind != "" {
		return "every " + string(t.kind) + " handler"
	}
	return fmt.Sprintf("handler '%s' of module %s", t.id, t.module)
}

// protocolError is an HTTP error answered instead of an AdmissionReview.
type protocolError struct {
	code int
	msg  string
}

func (e *protocolError) Error() string { return e.msg }

func protocolErrorf(code int, format string, args ...any) *protocolError {
	return &protocolError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP answers one AdmissionReview, or a ConversionReview on the path
// of a convert handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t, data, perr := s.read(w, r)
	if perr == nil {
		var meta metav1.TypeMeta
		_ = json.Unmarshal(data, &meta)
		if meta.Kind == "ConversionReview" {
			var out any
			if out, perr = s.conversion(r, t, data); perr == nil {
				s.writeJSON(w, out)
				return
			}
		} else {
			var review *admissionv1.AdmissionReview
			if review, perr = decodeReview(data); perr == nil {
				var resp *admissionv1.AdmissionResponse
				if resp, perr = s.review(r, t, review.Request); perr == nil {
					s.write(w, review.APIVersion, resp)
					return
				}
			}
		}
	}
	s.log.Warn("admission request refused", "path", r.URL.Path, "code", perr.code, "reason", perr.msg)
	http.Error(w, perr.msg, perr.code)
}

// read checks the request's method, path and type and reads its body.
func (s *Server) read(w http.ResponseWriter, r *http.Request) (target, []byte, *protocolError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return target{}, nil, protocolErrorf(http.StatusMethodNotAllowed, "only POST is served, got %s", r.Method)
	}
	t, ok := parsePath(r.URL.Path)
	if !ok {
		return target{}, nil, protocolErrorf(http.StatusNotFound, "no handler at %q: paths are /<module>/<handler-id>, %s and %s",
			r.URL.Path, PathValidate, PathMutate)
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return t, nil, protocolErrorf(http.StatusUnsupportedMediaType, "content type %q: want application/json", ct)
		}
	}
	limit := int64(s.opts.Settings.MaxRequestBytes)
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return t, nil, protocolErrorf(http.StatusRequestEntityTooLarge, "the request is larger than %d bytes (admission.maxRequestBytes)", limit)
	case err != nil:
		return t, nil, protocolErrorf(http.StatusBadRequest, "reading the request: %v", err)
	}
	return t, data, nil
}

// decodeReview decodes and checks an AdmissionReview.
func decodeReview(data []byte) (*admissionv1.AdmissionReview, *protocolError) {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, protocolErrorf(http.StatusBadRequest, "the body is not an AdmissionReview: %v", err)
	}
	switch {
	case review.Kind != "AdmissionReview":
		return nil, protocolErrorf(http.StatusBadRequest, "the body is a %q, not an AdmissionReview", review.Kind)
	case review.APIVersion != "admission.k8s.io/v1" && review.APIVersion != "admission.k8s.io/v1beta1":
		return nil, protocolErrorf(http.StatusBadRequest, "AdmissionReview %q: want admission.k8s.io/v1 or v1beta1", review.APIVersion)
	case review.Request == nil:
		return nil, protocolErrorf(http.StatusBadRequest, "the AdmissionReview has no request")
	case review.Request.UID == "":
		return nil, protocolErrorf(http.StatusBadRequest, "the AdmissionReview's request has no uid")
	case review.Request.Resource.Version == "" || review.Request.Resource.Resource == "":
		return nil, protocolErrorf(http.StatusBadRequest, "the AdmissionReview's request names no resource")
	case review.Request.Operation == "":
		return nil, protocolErrorf(http.StatusBadRequest, "the AdmissionReview's request has no operation")
	}
	return &review, nil
}

// write sends the response in the request's API version.
func (s *Server) write(w http.ResponseWriter, apiVersion string, resp *admissionv1.AdmissionResponse) {
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: "AdmissionReview"},
		Response: resp,
	}
	s.writeJSON(w, out)
}

func (s *Server) writeJSON(w http.ResponseWriter, out any) {
	data, err := json.Marshal(out)
	if err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}
