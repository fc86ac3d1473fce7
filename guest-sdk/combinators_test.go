package kopf

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Kopf's filter combinators (kopf.all_, any_, none_, not_): over When
// functions and over ValueFuncs, evaluated in order and no further than
// the verdict needs.
func TestCombinators(t *testing.T) {
	var asked []string
	when := func(name string, v bool) func(*Context) bool {
		return func(*Context) bool { asked = append(asked, name); return v }
	}
	yes, no := when("yes", true), when("no", false)
	tests := []struct {
		name      string
		fn        func(*Context) bool
		want      bool
		wantAsked string
	}{
		{"all of: all match", AllOf(yes, yes), true, "[yes yes]"},
		{"all of: stops at the first mismatch", AllOf(no, yes), false, "[no]"},
		{"all of nothing", AllOf[func(*Context) bool](), true, "[]"},
		{"any of: stops at the first match", AnyOf(yes, no), true, "[yes]"},
		{"any of: none match", AnyOf(no, no), false, "[no no]"},
		{"any of nothing", AnyOf[func(*Context) bool](), false, "[]"},
		{"none of: none match", NoneOf(no, no), true, "[no no]"},
		{"none of: stops at the first match", NoneOf(yes, no), false, "[yes]"},
		{"not", Not(no), true, "[no]"},
		{"nested", AllOf(Not(no), AnyOf(no, yes)), true, "[no no yes]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			got := tt.fn(&Context{})
			if got != tt.want || fmt.Sprint(asked) != tt.wantAsked {
				t.Errorf("= %v asking %v, want %v asking %s", got, asked, tt.want, tt.wantAsked)
			}
		})
	}
}

// The combinators compose ValueFuncs too, in the filters that take them,
// and the guest's when runs them.
func TestCombinatorsOfValueFuncs(t *testing.T) {
	r := fresh(t)
	is := func(want string) ValueFunc { return func(v any, _ *Context) bool { return v == want } }
	OnCreate("", "v1", "pods", createFn, ID("app"), Labels(map[string]any{"app": AnyOf(is("web"), is("api"))}))
	OnCreate("", "v1", "pods", createFn, ID("not_db"), Labels(map[string]any{"app": Not(is("db"))}),
		When(NoneOf(func(c *Context) bool { return c.Name() == "skip" })))
	if _, err := r.manifest(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		handler, name, app string
		want               bool
	}{
		{"app", "p", "web", true}, {"app", "p", "api", true}, {"app", "p", "db", false},
		{"not_db", "p", "web", true}, {"not_db", "p", "db", false}, {"not_db", "skip", "web", false},
	}
	for _, tt := range tests {
		body := json.RawMessage(fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":%q}}}`, tt.name, tt.app))
		resp := run(t, &recorder{}, abi.Request{Call: abi.CallWhen, Handler: tt.handler, Kind: abi.KindCreate, Name: tt.name, Body: body})
		if resp.Matched == nil || *resp.Matched != tt.want {
			t.Errorf("%s on %s/app=%s: matched %v, want %v", tt.handler, tt.name, tt.app, resp.Matched, tt.want)
		}
	}
}
