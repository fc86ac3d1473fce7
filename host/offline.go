package host

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/offline"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"k8s.io/client-go/rest"
)

// ErrNoHandler is wrapped by the error of Invoke when the module has no
// handler with the requested id.
var ErrNoHandler = offline.ErrNoHandler

// ErrNotCalled is wrapped by the error of [Invoke] when the operator would
// not call the handler for the object (a filter does not match) and
// [Invocation.Force] is not set.
var ErrNotCalled = offline.ErrNotCalled

// Inspect loads the module file at path, offline, and returns its validated
// manifest and its digest ("sha256:<hex>"). A file that is not a module of
// this ABI version is an error that says what to rebuild. The wasm settings
// (nil: settings.Default()) name the compile cache, which makes a second
// look at the same module fast.
func Inspect(ctx context.Context, path string, s *settings.Settings) (abi.Manifest, string, error) {
	if s == nil {
		d := settings.Default()
		s = &d
	}
	rt, err := modules.NewRuntime(s.Wasm, discardLogger)
	if err != nil {
		return abi.Manifest{}, "", err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := modules.Load(ctx, rt, path)
	if err != nil {
		return abi.Manifest{}, "", err
	}
	return mod.Manifest(), mod.Digest(), nil
}

// Invocation is one offline handler call for [Invoke].
type Invocation struct {
	// Module is the .wasm file.
	Module string
	// Handler is the handler's id in the module's manifest.
	Handler string
	// Object is the object as JSON; Old, when not nil, is its previous
	// state (an update rather than a create).
	Object, Old []byte
	// ConvertTo is the apiVersion a convert handler converts the object
	// to; required for convert handlers, ignored otherwise.
	ConvertTo string
	// Settings supply the wasm limits and the annotations prefix of the
	// diff-base essences. Default settings.Default().
	Settings *settings.Settings
	// Logger receives the module's log records. Default slog.Default().
	Logger *slog.Logger
	// Force calls the handler even when the operator would not (a filter
	// does not match the object); without it that is an [ErrNotCalled].
	Force bool
	// Objects are stored objects (Lists are expanded) from which the
	// module's Kubernetes requests are served, with Object among them;
	// writes change them in memory only.
	Objects []map[string]any
	// RestConfig, Kubeconfig and KubeContext, when any is set, name a
	// cluster that answers the reads (get, list) the stored objects do
	// not, as for [Run]; nothing is ever written to it.
	RestConfig              *rest.Config
	Kubeconfig, KubeContext string
	// KubeCalls, when set, is told of each Kubernetes request of the module.
	KubeCalls func(KubeCall)
}

// Invoke calls one handler of a module offline and returns its response.
// The request is built by the code the operator uses, from the cause the
// operator would detect between Old and Object, after the handler's
// filters are applied as the operator would ([ErrNotCalled] unless Force).
// Kubernetes requests are served from the stored Objects and, for reads,
// the Kubeconfig's cluster; without either they answer 501 "not
// available", as Events and index look-ups always do. A failure of the
// module itself (a trap, a timeout, bad output) is the error.
func Invoke(ctx context.Context, inv Invocation) (*abi.Request, *abi.Response, error) {
	if inv.Settings == nil {
		s := settings.Default()
		inv.Settings = &s
	}
	if inv.Logger == nil {
		inv.Logger = slog.Default()
	}
	call := offline.Call{Module: inv.Module, Handler: inv.Handler, Object: inv.Object, Old: inv.Old,
		ConvertTo: inv.ConvertTo, Settings: inv.Settings, Logger: inv.Logger, Force: inv.Force, Objects: inv.Objects}
	if inv.RestConfig != nil || inv.Kubeconfig != "" || inv.KubeContext != "" {
		call.Connect = func() (*kube.Client, error) {
			cfg, err := restConfig(inv.RestConfig, inv.Kubeconfig, inv.KubeContext)
			if err != nil {
				return nil, err
			}
			return kube.New(cfg, kube.Options{Settings: inv.Settings, Logger: inv.Logger})
		}
	}
	if inv.KubeCalls != nil {
		call.KubeCalls = func(c offline.KubeCall) { inv.KubeCalls(KubeCall(c)) }
	}
	return offline.Invoke(ctx, call)
}

// KubeCall is one Kubernetes request a module made during [Invoke], and
// how it was answered.
type KubeCall struct {
	Request abi.KubeRequest `json:"request"`
	// Code is the HTTP status of the answer (200 on success).
	Code int `json:"code"`
	// Source says who answered: "stored" (the stored objects), "cluster"
	// (a read from the kubeconfig's cluster), "none" (refused).
	Source string `json:"source"`
	// Message is the error's message when Code is not 200.
	Message string `json:"message,omitempty"`
}

// Call names the request: "get configmaps default/x".
func (c KubeCall) Call() string {
	r := c.Request
	res := r.Resource
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", r.Verb, res, strings.Trim(r.Namespace+"/"+r.Name, "/")))
}
