package examplestest

import (
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestErrors checks what each kind of error leads to, and the two bad
// inputs: a resource the cluster does not serve, a permission not declared.
func TestErrors(t *testing.T) {
	const ns = "ex-errors"
	logs := operator(t, ns, "02-errors")
	for _, m := range []string{"temporary", "permanent", "arbitrary", "unserved", "forbidden"} {
		createObject(t, kopfexamples, ns, kex(m, map[string]any{"mode": m}, map[string]any{}))
	}
	start := time.Now()
	e2etest.Eventually(t, 30*time.Second, "temporary", hasString(t, kopfexamples, ns, "temporary", "succeeded at retry 2", "status", "temporary", "message"))
	if elapsed := time.Since(start); elapsed < 2*time.Second {
		t.Errorf("two retries with a 1s delay took only %s", elapsed)
	}
	tests := []struct{ name, event string }{
		{"permanent", "this object cannot ever work"},
		{"arbitrary", "something unexpected on try 3"},
		{"unserved", "unserved: "},
		{"unserved", "nonexistents"},
		{"forbidden", `forbidden by the host: module "errors" did not declare the permission to create secrets`},
	}
	for _, tt := range tests {
		e2etest.Eventually(t, 30*time.Second, tt.name+" event", hasEvent(ns, tt.name, tt.event))
	}
	e2etest.Eventually(t, 5*time.Second, "logs", logged(logs, "the cluster does not serve it", "refused"))
	if got := get(t, kopfexamples, ns, "permanent").Object["status"]; got != nil {
		if st, _ := got.(map[string]any); st["permanent"] != nil {
			t.Errorf("a permanently failed handler stored a result: %v", st)
		}
	}
}
