package webhookname_test

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/webhookname"
)

func TestPath(t *testing.T) {
	for id, want := range map[string]string{
		"check":           "/m/check",
		"parent/child":    "/m/parent/child",
		"fn/spec.field":   "/m/fn/spec.field",
		"odd name?#":      "/m/odd%20name%3F%23",
		"check_something": "/m/check_something",
	} {
		if got := webhookname.Path("m", id); got != want {
			t.Errorf("Path(m, %q) = %q, want %q", id, got, want)
		}
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"check":         "check.mod.x.dev",
		"parent/child":  "parent.child.mod.x.dev",
		"Check_It":      "check-it.mod.x.dev",
		"fn/spec.field": "fn.spec.field.mod.x.dev",
		"a:b":           "ax3ab.mod.x.dev",
	} {
		if got := webhookname.Name("mod", in, "x.dev"); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}
