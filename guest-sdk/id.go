package kopf

import (
	"reflect"
	"runtime"
	"strings"
)

// funcName is a handler's default id, as Kopf's __qualname__: the Go
// function's name without its package path ("createFn"). A closure keeps
// the name Go gives it within its package ("init.func1"), which is stable
// as long as the source around it is; a method value is "Type.Method".
func funcName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return ""
	}
	return shortName(f.Name())
}

// shortName turns "example.com/x/pkg.(*T).Method-fm" into "T.Method".
func shortName(full string) string {
	name := full[strings.LastIndexByte(full, '/')+1:]
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, "-fm")
	name = strings.NewReplacer("(*", "", ")", "", "[...]", "").Replace(name)
	return name
}
