package kopf

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

type quotaError struct{}

func (*quotaError) Error() string { return "over quota" }

// Events about other objects and Kopf's exception Events reach the host
// with the object's reference, from resource handlers and activities; an
// empty list of objects posts nothing, as in Kopf.
func TestEventsAboutObjects(t *testing.T) {
	fresh(t)
	pod := Object{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "namespace": "ns", "uid": "u"}}
	node := Object{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n1"}}
	OnStartup(func(ctx *Context) (any, error) {
		return nil, ctx.InfoAbout([]Object{pod, node}, "Started", "hello")
	}, ID("start"))
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		if err := ctx.WarnAbout([]Object{node}, "Pressure", "full"); err != nil {
			return nil, err
		}
		// No objects, no Events, as Kopf's kopf.event([], ...).
		if err := ctx.PostEventAbout(nil, EventNormal, "Nothing", "about no object"); err != nil {
			return nil, err
		}
		if err := ctx.InfoAbout([]Object{}, "Nothing", "about no object"); err != nil {
			return nil, err
		}
		if err := ctx.Exception(nil, "", "about no object", &quotaError{}); err != nil {
			return nil, err
		}
		if err := ctx.Exception([]Object{ctx.Body()}, "", "cannot schedule:", &quotaError{}); err != nil {
			return nil, err
		}
		return nil, ctx.Exception([]Object{pod}, "Custom", "", errors.New("x"))
	}, ID("create"))

	host := &recorder{reply: replyWith(abi.HostReply{})}
	if resp := run(t, host, abi.Request{Handler: "start", Activity: abi.KindStartup}); resp.Outcome.Status != abi.OutcomeSuccess {
		t.Fatalf("startup: %+v", resp.Outcome)
	}
	if resp := run(t, host, bodyRequest("create", jsonString(t, pod))); resp.Outcome.Status != abi.OutcomeSuccess {
		t.Fatalf("create: %+v", resp.Outcome)
	}
	podRef := &abi.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: "p", Namespace: "ns", UID: "u"}
	nodeRef := &abi.ObjectReference{APIVersion: "v1", Kind: "Node", Name: "n1"}
	want := []abi.EventRequest{
		{Type: "Normal", Reason: "Started", Message: "hello", About: podRef},
		{Type: "Normal", Reason: "Started", Message: "hello", About: nodeRef},
		{Type: "Warning", Reason: "Pressure", Message: "full", About: nodeRef},
		{Type: "Error", Reason: "quotaError", Message: "cannot schedule: over quota", About: podRef},
		{Type: "Error", Reason: "Custom", Message: "x", About: podRef},
	}
	var got []abi.EventRequest
	for _, c := range host.calls {
		if c.fn != abi.HostPostEvent {
			continue
		}
		var ev abi.EventRequest
		if err := json.Unmarshal(c.request, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if jsonString(t, got) != jsonString(t, want) {
		t.Errorf("events\n got %s\nwant %s", jsonString(t, got), jsonString(t, want))
	}
}
