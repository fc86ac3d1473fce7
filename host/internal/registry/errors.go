package registry

import (
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// InvalidHandlerError is a handler declaration the registry cannot use.
type InvalidHandlerError struct {
	Module, Handler string
	Err             error
}

func (e *InvalidHandlerError) Error() string {
	return fmt.Sprintf("registry: module[%s] handler[%s]: %v", e.Module, e.Handler, e.Err)
}

func (e *InvalidHandlerError) Unwrap() error { return e.Err }

// DuplicateHandlerError is one handler id declared by two modules for the
// same resource: their progress and results would collide on the objects.
type DuplicateHandlerError struct {
	Handler  string
	Resource abi.ResourceRef
	Modules  [2]string
}

func (e *DuplicateHandlerError) Error() string {
	return fmt.Sprintf("registry: handler[%s] of resource[%s.%s.%s] is declared by module[%s] and module[%s]",
		e.Handler, e.Resource.Plural, e.Resource.Version, e.Resource.Group, e.Modules[0], e.Modules[1])
}

// WhenError is a callback filter that the guest failed to evaluate.
type WhenError struct {
	Module, Handler string
	Err             error
}

func (e *WhenError) Error() string {
	return fmt.Sprintf("registry: module[%s] handler[%s]: when filter: %v", e.Module, e.Handler, e.Err)
}

func (e *WhenError) Unwrap() error { return e.Err }

// UnservedError says a handler declares something this host does not
// serve yet: the module loads, the handler is left out, and the host
// warns.
type UnservedError struct {
	// What is not served, in the author's words.
	What string
}

func (e *UnservedError) Error() string { return e.What + " are not served yet" }
