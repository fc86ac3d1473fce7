package host

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// buildRequest builds the request the operator would send to the handler
// spec about object (JSON), with old (JSON or nil) as its previous state.
// It is a simplified cycle, good for trying a handler offline:
//
//   - changing handlers get the reason of their kind (field handlers:
//     create without old, update with it), old and new diff-base essences
//     (the object without status and most of its metadata, as Kopf stores
//     it; field handlers get the field's values) and Kopf's diff of them;
//     retry 0, started now;
//   - event handlers get an ADDED event (MODIFIED with old);
//   - validate and mutate handlers get a CREATE admission request (UPDATE
//     with old), with the bodies as old and new;
//   - startup, cleanup and probe handlers get no object;
//   - timers, daemons and index handlers get the object only.
//
// Memos and indices are empty; there are no progress records.
func buildRequest(spec abi.HandlerSpec, object, old []byte, prefix string) (*abi.Request, error) {
	req := &abi.Request{Handler: spec.ID, Kind: spec.Kind, Param: spec.Options.Param, Started: now().UTC()}
	if spec.Kind.IsActivity() {
		req.Activity = spec.Kind
		return req, nil
	}
	body, err := decodeObject("object", object)
	if err != nil {
		return nil, err
	}
	var before map[string]any
	if old != nil {
		if before, err = decodeObject("old object", old); err != nil {
			return nil, err
		}
	}
	req.Body = object
	req.Name = objects.GetString(body, objects.Path{"metadata", "name"})
	req.Namespace = objects.GetString(body, objects.Path{"metadata", "namespace"})
	req.UID = objects.GetString(body, objects.Path{"metadata", "uid"})
	req.Resource = resourceRef(spec.Resource, body)
	switch {
	case spec.Kind.IsChanging():
		err = fillChange(req, spec, body, before, prefix)
	case spec.Kind == abi.KindEvent:
		req.Event = &abi.WatchEvent{Type: "ADDED", Object: object}
		if old != nil {
			req.Event.Type = "MODIFIED"
		}
	case spec.Kind.IsWebhook():
		req.Admission = &abi.AdmissionRequest{UID: "kopf-wasm-invoke", Operation: "CREATE"}
		req.Old, req.New = old, object
		if old != nil {
			req.Admission.Operation = "UPDATE"
		}
		req.Diff, err = objects.Compare(mapOrNil(before), body).ABI()
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// fillChange sets the reason, old, new and diff of a changing handler.
func fillChange(req *abi.Request, spec abi.HandlerSpec, body, before map[string]any, prefix string) error {
	storage, err := persistence.New(persistence.Options{Prefix: prefix, Finalizer: prefix + "/KopfFinalizerMarker"})
	if err != nil {
		return err
	}
	var extra []objects.Path
	var field objects.Path
	if spec.Filters.Field != "" {
		field = objects.ParsePath(spec.Filters.Field)
		extra = append(extra, field)
	}
	newEssence := any(storage.Essence(body, extra))
	var oldEssence any
	if before != nil {
		oldEssence = storage.Essence(before, extra)
	}
	diff := objects.Compare(oldEssence, newEssence)
	req.Reason = reasonOf(spec.Kind, before != nil)
	if field != nil {
		oldEssence, _ = objects.Get(oldEssence, field)
		newEssence, _ = objects.Get(newEssence, field)
		diff = diff.Reduce(field)
	}
	if req.Old, err = rawOrNil(oldEssence); err != nil {
		return err
	}
	if req.New, err = rawOrNil(newEssence); err != nil {
		return err
	}
	req.Diff, err = diff.ABI()
	return err
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
func resourceRef(sel *abi.ResourceSelector, body map[string]any) *abi.ResourceRef {
	ref := &abi.ResourceRef{}
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

func rawOrNil(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return objects.Encode(v)
}

func mapOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}
