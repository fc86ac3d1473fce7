package kube

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// ObjectRef names the object an Event is about.
type ObjectRef struct {
	APIVersion, Kind, Namespace, Name, UID string
}

// RefOf returns the reference of an object.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	return ObjectRef{
		APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID()),
	}
}

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// maxEventMessage is the longest message posted; longer ones keep their
// start and end, as Kopf cuts them.
const maxEventMessage = 1024

// PostEvent records a core/v1 Event about an object: ev.Type is "Normal"
// or "Warning". Events about cluster-scoped objects go to
// the namespace "default", as Kopf's do; Events about Events are dropped, as Kopf drops
// them. An Event is worth little next to the work it reports on: a failure
// is logged as a warning here (the caller need not log it again) and
// retried only briefly, and the error is returned for callers that report
// it further (a guest's host call).
func (c *Client) PostEvent(ctx context.Context, about ObjectRef, ev abi.EventRequest) error {
	if about.Kind == "Event" && (about.APIVersion == "v1" || about.APIVersion == "events.k8s.io/v1") {
		return nil
	}
	ns := about.Namespace
	if ns == "" {
		ns = clusterEventNamespace
	}
	body := c.eventBody(ns, about, ev, time.Now())
	ctx, cancel := context.WithTimeout(ctx, c.kube.RequestTimeout)
	defer cancel()
	info := reqInfo{verb: "create", resource: gvrString(eventsGVR), namespace: ns}
	short := retrier{backoffs: c.retry.backoffs[:min(2, len(c.retry.backoffs))], timeout: c.kube.RequestTimeout,
		track: c.retry.track}
	err := short.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
		_, err := c.dyn.Resource(eventsGVR).Namespace(ns).Create(ctx, body, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		c.log.Warn("cannot post an event", "kind", about.Kind, "namespace", about.Namespace,
			"name", about.Name, "reason", ev.Reason, "error", err)
		return fmt.Errorf("kube: %w", err)
	}
	return nil
}

func (c *Client) eventBody(ns string, about ObjectRef, ev abi.EventRequest, now time.Time) *unstructured.Unstructured {
	ts := now.UTC().Format(time.RFC3339)
	involved := map[string]any{"apiVersion": about.APIVersion, "kind": about.Kind, "name": about.Name}
	if about.Namespace != "" {
		involved["namespace"] = about.Namespace
	}
	if about.UID != "" {
		involved["uid"] = about.UID
	}
	typ := ev.Type
	if typ == "" {
		typ = "Normal"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":         "v1",
		"kind":               "Event",
		"metadata":           map[string]any{"namespace": ns, "generateName": c.posting.EventNamePrefix},
		"type":               typ,
		"reason":             ev.Reason,
		"message":            cutMessage(ev.Message, maxEventMessage),
		"action":             "Action",
		"reportingComponent": c.posting.ReportingComponent,
		"reportingInstance":  c.instance,
		"source":             map[string]any{"component": c.posting.ReportingComponent},
		"involvedObject":     involved,
		"firstTimestamp":     ts,
		"lastTimestamp":      ts,
		"count":              int64(1),
	}}
}

// cutMessage keeps messages up to max bytes; longer ones keep their first
// and last parts around "...", cut on rune boundaries.
func cutMessage(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	half := (max - 3) / 2
	head, tail := msg[:half], msg[len(msg)-half:]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + "..." + tail
}
