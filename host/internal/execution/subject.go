package execution

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// Subject is the object one or more handler calls are about, as one
// processing cycle (or one timer run) sees it. Its body is encoded once,
// on first use, however many calls and callback filters use it.
type Subject struct {
	// Resource is the object's resource, its Kind filled from the object.
	Resource abi.ResourceRef
	// Object is the body. It must not change while the subject is in use.
	Object *unstructured.Unstructured
	// Status says whether the resource has the status subresource, so
	// results go to /status.
	Status bool
	// Cycle is the id of the processing cycle that handles the subject
	// (empty outside one): every log line of the cycle, the guests'
	// included, carries it as "cycle".
	Cycle string

	once sync.Once
	raw  json.RawMessage
	err  error
}

// NewSubject returns the subject of obj, an object of resource ref.
func NewSubject(ref abi.ResourceRef, status bool, obj *unstructured.Unstructured) *Subject {
	ref.Kind = obj.GetKind()
	return &Subject{Resource: ref, Object: obj, Status: status}
}

// Raw is the body as JSON, encoded on the first call.
func (s *Subject) Raw() (json.RawMessage, error) {
	s.once.Do(func() {
		s.raw, s.err = json.Marshal(s.Object.Object)
		if s.err != nil {
			s.err = fmt.Errorf("encode the object: %w", s.err)
		}
	})
	return s.raw, s.err
}

// Ref is the reference Events about the subject carry.
func (s *Subject) Ref() kube.ObjectRef { return kube.RefOf(s.Object) }

// Attrs are the log attributes naming the subject: one group "object" with
// its kind, namespace and name, the same for every handler kind.
func (s *Subject) Attrs() []any {
	if s.Cycle != "" {
		return append(ObjectAttrs(s.Object), slog.String("cycle", s.Cycle))
	}
	return ObjectAttrs(s.Object)
}

// ObjectAttrs are the log attributes naming an object (see Subject.Attrs).
func ObjectAttrs(obj *unstructured.Unstructured) []any {
	return []any{slog.Group("object", "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())}
}
