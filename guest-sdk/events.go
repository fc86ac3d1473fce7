package kopf

import (
	"errors"
	"reflect"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// PostEventAbout posts a Kubernetes Event about each of objs, Kopf's
// kopf.event(objs, type=, reason=, message=): any objects, from any
// handler, activities included. Each object needs apiVersion, kind and
// metadata.name (metadata.namespace and uid when it has them); Events
// about cluster-scoped objects go to the namespace "default", as Kopf's.
// With no objects it posts nothing, as Kopf's kopf.event([], ...);
// [Context.PostEvent] posts about the object being handled. The first
// failure is returned after every object was tried.
func (c *Context) PostEventAbout(objs []Object, eventType, reason, message string) error {
	var errs []error
	for _, obj := range objs {
		ref := objectReference(obj)
		errs = append(errs, c.postEvent(abi.EventRequest{Type: eventType, Reason: reason, Message: message, About: &ref}))
	}
	return errors.Join(errs...)
}

// InfoAbout posts a Normal Event about objs, Kopf's kopf.info.
func (c *Context) InfoAbout(objs []Object, reason, message string) error {
	return c.PostEventAbout(objs, EventNormal, reason, message)
}

// WarnAbout posts a Warning Event about objs, Kopf's kopf.warn.
func (c *Context) WarnAbout(objs []Object, reason, message string) error {
	return c.PostEventAbout(objs, EventWarning, reason, message)
}

// Exception posts an Error Event about objs (none when there are none;
// []Object{ctx.Body()} for the object being handled), Kopf's
// kopf.exception: the reason defaults to the error's type name, and the
// message is message followed by the error.
func (c *Context) Exception(objs []Object, reason, message string, err error) error {
	if reason == "" {
		reason = errorTypeName(err)
	}
	if err != nil {
		message = strings.TrimSpace(message + " " + err.Error())
	}
	return c.PostEventAbout(objs, EventError, reason, message)
}

// errorTypeName is the name of err's type without its package and
// pointer, as Kopf names an exception by its class ("Error" for none).
func errorTypeName(err error) string {
	if err == nil {
		return "Error"
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "Error"
	}
	return t.Name()
}

func objectReference(obj Object) abi.ObjectReference {
	return abi.ObjectReference{
		APIVersion: obj.String("apiVersion"), Kind: obj.String("kind"),
		Name: obj.String("metadata.name"), Namespace: obj.String("metadata.namespace"), UID: obj.String("metadata.uid"),
	}
}
