package kopf

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestContextBodyParts(t *testing.T) {
	body := json.RawMessage(`{"metadata":{"name":"x"},"spec":{"a":1},"spec":{"a":2,"b":[1]},"status":"odd"}`)
	c := &Context{req: &abi.Request{Body: body}}
	spec := c.Spec()
	if spec["a"] != float64(2) || c.body.done {
		t.Fatalf("spec = %v (whole body decoded: %v); want the last spec, decoded alone", spec, c.body.done)
	}
	if c.Status() != nil || c.Meta().String("name") != "x" {
		t.Errorf("status %v, meta %v", c.Status(), c.Meta())
	}
	spec["seen"] = true // the body must show the same map
	whole := c.Body()
	if got := whole.Map("spec"); got["seen"] != true || got["a"] != float64(2) {
		t.Errorf("body.spec = %v; want the map Spec returned", got)
	}
	if whole["status"] != "odd" || c.Spec()["seen"] != true {
		t.Errorf("body = %v", whole)
	}
	empty := &Context{req: &abi.Request{}}
	if empty.Spec() != nil || len(empty.Body()) != 0 {
		t.Error("a request without a body has a spec")
	}
}
