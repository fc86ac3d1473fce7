package wasmrt

import (
	"reflect"
	"runtime"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// releaseBodies drops the function bodies (and their locals) that wazero's
// decoded module keeps in the heap after compiling it, and reports whether
// it could. wazero (v1.11, v1.12) copies every body out of the binary when
// it decodes a module and keeps the decoded module as long as its compiled
// code, though its compiler needs the bodies only while it compiles: they
// are 2.6 MB of a Go module's live heap (heap profile of a host serving the
// kopfexample module), which the GC's goal doubles, for every module a host
// serves.
//
// wazero has no option for this, so it reaches into the compiled module
// (compiledModule.module.CodeSection[i].Body) by reflection; the fields
// are checked, and anything unexpected leaves the module as it is.
// TestReleaseBodies fails if a wazero upgrade moves them. Only where
// wazero compiles to machine code (amd64, arm64): its interpreter lowers
// the bodies at compile time too, but is not worth the risk.
func releaseBodies(cm wazero.CompiledModule) bool {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return false
	}
	v := reflect.ValueOf(cm)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	mod := v.Elem().FieldByName("module")
	if !mod.IsValid() || mod.Kind() != reflect.Pointer || mod.IsNil() || mod.Elem().Kind() != reflect.Struct {
		return false
	}
	codes := mod.Elem().FieldByName("CodeSection")
	if !codes.IsValid() || codes.Kind() != reflect.Slice || codes.Type().Elem().Kind() != reflect.Struct {
		return false
	}
	elem := codes.Type().Elem()
	body, ok1 := elem.FieldByName("Body")
	locals, ok2 := elem.FieldByName("LocalTypes")
	goFunc, ok3 := elem.FieldByName("GoFunc")
	if !ok1 || !ok2 || !ok3 || body.Type != reflect.TypeFor[[]byte]() || locals.Type.Kind() != reflect.Slice || goFunc.Type.Kind() != reflect.Interface {
		return false
	}
	codes = reflect.NewAt(codes.Type(), unsafe.Pointer(codes.UnsafeAddr())).Elem()
	for i := range codes.Len() {
		c := codes.Index(i)
		if !c.FieldByIndex(goFunc.Index).IsNil() {
			continue // a host function: not ours to change
		}
		c.FieldByIndex(body.Index).SetZero()
		c.FieldByIndex(locals.Index).SetZero()
	}
	return true
}
