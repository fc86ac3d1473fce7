package offline

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// offlineCall is what `kopf-wasm invoke` hands the execution layer: the
// handler of spec and its input about object (JSON), with old (JSON or
// nil) as the object's previous state. The request itself is built by
// execution.Request, the code the operator uses; what differs offline is
// only where the input comes from:
//
//   - changing handlers get the cause the operator would detect from the
//     two states (registry.DetectCause on the diff-base essences that
//     persistence builds), with the reason of their kind (field handlers:
//     create without old, update with it); retry 0, started now;
//   - event handlers get an ADDED event (MODIFIED with old);
//   - validate and mutate handlers get a CREATE admission request (UPDATE
//     with old);
//   - convert handlers get the object to convert to convertTo (required);
//   - startup, cleanup and probe handlers get no object;
//   - timers, daemons and index handlers get the object only.
//
// Memos and indices are empty; there are no stored progress records.
func offlineCall(module string, spec abi.HandlerSpec, object, old []byte, prefix, convertTo string, now time.Time) (*registry.Handler, execution.Input, error) {
	in := execution.Input{Now: now.UTC()}
	if spec.Kind.IsActivity() {
		h, err := registry.NewHandler(module, spec, abi.ResourceRef{})
		in.Record = persistence.NewRecord("", in.Now)
		return h, in, err
	}
	body, err := decodeObject("object", object)
	if err != nil {
		return nil, in, err
	}
	var before map[string]any
	if old != nil {
		if before, err = decodeObject("old object", old); err != nil {
			return nil, in, err
		}
	}
	ref := resourceRef(spec.Resource, body)
	h, err := registry.NewHandler(module, spec, ref)
	if err != nil {
		return nil, in, err
	}
	in.Subject = execution.NewSubject(ref, false, &unstructured.Unstructured{Object: body})
	switch {
	case spec.Kind.IsChanging():
		cause, err := offlineCause(h, body, before, prefix)
		if err != nil {
			return nil, in, err
		}
		in.Cause = cause
	case spec.Kind == abi.KindEvent:
		in.Event = &execution.EventInput{Type: "ADDED"}
		if old != nil {
			in.Event.Type = "MODIFIED"
		}
	case spec.Kind == abi.KindConvert:
		if convertTo == "" {
			return nil, in, fmt.Errorf("%w: handler %s converts objects: name the apiVersion to convert to", hosterr.ErrUsage, spec.ID)
		}
		in.Conversion = &abi.ConversionRequest{UID: "kopf-wasm-invoke", DesiredAPIVersion: convertTo}
	case spec.Kind.IsWebhook():
		in.Admission = &execution.AdmissionInput{Request: abi.AdmissionRequest{UID: "kopf-wasm-invoke", Operation: "CREATE"}, Old: before}
		if old != nil {
			in.Admission.Request.Operation = "UPDATE"
		}
	}
	in.Record = persistence.NewRecord(reasonOf(spec.Kind, before != nil), in.Now)
	return h, in, nil
}

// offlineCause detects the cause between two states as the operator does,
// with the reason of the handler's kind.
func offlineCause(h *registry.Handler, body, before map[string]any, prefix string) (*registry.Cause, error) {
	storage, err := persistence.New(persistence.Options{Prefix: prefix, Finalizer: prefix + "/KopfFinalizerMarker"})
	if err != nil {
		return nil, err
	}
	var extra []objects.Path
	if h.Field != nil {
		extra = append(extra, h.Field)
	}
	in := registry.CauseInput{Body: body, Finalizer: storage.Finalizer(), New: storage.Essence(body, extra)}
	if before != nil {
		in.Old = storage.Essence(before, extra)
	}
	cause := registry.DetectCause(in)
	cause.Reason = reasonOf(h.Kind(), before != nil)
	return &cause, nil
}

func reasonOf(kind abi.HandlerKind, hasOld bool) abi.Reason {
	switch kind {
	case abi.KindCreate:
		return abi.ReasonCreate
	case abi.KindUpdate:
		return abi.ReasonUpdate
	case abi.KindDelete:
		return abi.ReasonDelete
	case abi.KindResume:
		return abi.ReasonResume
	}
	if hasOld {
		return abi.ReasonUpdate
	}
	return abi.ReasonCreate
}

// resourceRef is the handler's selector completed from the object's
// apiVersion and kind; the object is namespaced when it names a namespace.
func resourceRef(sel *abi.ResourceSelector, body map[string]any) abi.ResourceRef {
	var ref abi.ResourceRef
	if sel != nil {
		ref.Group, ref.Version, ref.Plural = sel.Group, sel.Version, sel.Name
	}
	if apiVersion := objects.GetString(body, objects.Path{"apiVersion"}); apiVersion != "" {
		group, version, found := strings.Cut(apiVersion, "/")
		if !found {
			group, version = "", apiVersion
		}
		ref.Group, ref.Version = group, version
	}
	ref.Kind = objects.GetString(body, objects.Path{"kind"})
	ref.Namespaced = objects.GetString(body, objects.Path{"metadata", "namespace"}) != ""
	return ref
}

func decodeObject(what string, data []byte) (map[string]any, error) {
	m, err := objects.DecodeMap(data)
	if err != nil || m == nil {
		return nil, fmt.Errorf("the %s is not a JSON object: give a Kubernetes object as YAML or JSON", what)
	}
	return m, nil
}
