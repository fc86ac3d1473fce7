// Command scanning is the module of the reactor's scanning test: a handler
// of a custom resource that does not exist when the host starts
// (widgets.scan.kopf.dev), a handler of every resource in the category
// "kopfscan", one of every resource of the group scan.kopf.dev, and a
// callable label filter, so that one module shows CRDs
// followed at run time, category selectors and callbacks evaluated in the
// guest.
package main

import (
	"strings"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("scanning", "0.1.0")
	kopf.OnCreate("scan.kopf.dev", "v1", "widgets", created("widget"), kopf.ID("widget_fn"))
	kopf.OnCreate("", "", "", created("category"), kopf.ID("category_fn"), kopf.Category("kopfscan"))
	// Every resource of the group (Kopf's kopf.EVERYTHING narrowed to it).
	kopf.OnCreate("scan.kopf.dev", "", kopf.Everything, created("everything"), kopf.ID("everything_fn"))
	// Only objects whose label "tier" starts with "gold" (Kopf's callable
	// label filter); others are not handled and nothing is stored on them.
	kopf.OnCreate("scan.kopf.dev", "v1", "widgets", created("gold"), kopf.ID("gold_fn"),
		kopf.Labels(map[string]any{"tier": func(v any, _ *kopf.Context) bool {
			s, _ := v.(string)
			return strings.HasPrefix(s, "gold")
		}}))
}

func created(by string) kopf.Handler {
	return func(*kopf.Context) (any, error) {
		return map[string]any{"by": by}, nil
	}
}

func main() {}
