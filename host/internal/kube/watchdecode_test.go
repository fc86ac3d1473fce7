package kube

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The events below are jsondecode's test stream (jsondecode/watch_test.go),
// served by the fake API servers of the watch tests.

// sampleEvent is a watch event as the API server sends it for a
// kopfexample that the operator has handled.
const sampleEvent = `{"type":"MODIFIED","object":{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
	`"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":` +
	`"{\"spec\":{\"duration\":\"1m\",\"field\":\"value\",\"items\":[\"item1\",\"item2\"]}}\n"},` +
	`"creationTimestamp":"2025-11-22T08:00:01Z","finalizers":["kopf.zalando.org/KopfFinalizerMarker"],` +
	`"generation":2,"labels":{"app":"bench","idx":"1234"},"managedFields":[{"apiVersion":"kopf.dev/v1",` +
	`"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:duration":{},"f:field":{},"f:items":{}}},` +
	`"manager":"bench","operation":"Update","time":"2025-11-22T08:00:01Z"},{"apiVersion":"kopf.dev/v1",` +
	`"fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:create_fn":{".":{},"f:message":{}}}},` +
	`"manager":"kopf-wasm","operation":"Update","subresource":"status","time":"2025-11-22T08:00:02Z"}],` +
	`"name":"kex-1234","namespace":"bench","resourceVersion":"987654","uid":"4b1e5f0c-8e0a-4a59-9d6e-2f7c1a0b3c4d"},` +
	`"spec":{"duration":"1m","field":"value","items":["item1","item2"],"ratio":0.75,"count":-3},` +
	`"status":{"create_fn":{"message":"created \u00e9t\u00e9 \ud83d\ude00"}}}}` + "\n"

const (
	bookmarkEvent = `{"type":"BOOKMARK","object":{"kind":"KopfExample","apiVersion":"kopf.dev/v1",` +
		`"metadata":{"resourceVersion":"987700","creationTimestamp":null}}}` + "\n"
	goneEvent = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},` +
		`"status":"Failure","message":"too old resource version: 1 (987000)","reason":"Expired","code":410}}` + "\n"
	// prettyEvent spreads over lines and is followed by another event on
	// the same line.
	prettyEvent = "{\n  \"type\": \"ADDED\",\n  \"object\": {\n    \"apiVersion\": \"v1\",\n" +
		"    \"kind\": \"ConfigMap\",\n    \"metadata\": {\"name\": \"a]}\\\"{\", \"resourceVersion\": \"5\"},\n" +
		"    \"data\": {\"k\": \"[{\"}\n  }\n}" +
		`{"type":"DELETED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}}` + "\r\n\n"
)

// recordedStream holds several events, the last an ERROR 410.
const recordedStream = sampleEvent + bookmarkEvent + prettyEvent + "  \n" + goneEvent

// TestWatchDecoderReportsErrorEvents: the Status of an ERROR event goes to
// onError (the only sign of a 410 Gone the host gets: the informer lists
// again without reporting it to the watch error handler), and still to the
// caller.
func TestWatchDecoderReportsErrorEvents(t *testing.T) {
	var got []*metav1.Status
	d := newWatchDecoder(io.NopCloser(strings.NewReader(recordedStream)), streamHooks{
		onError: func(st *metav1.Status) { got = append(got, st) },
	})
	var lastType watch.EventType
	var lastObj any
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			break
		}
		lastType, lastObj = typ, obj
	}
	if len(got) != 1 || got[0].Code != http.StatusGone || got[0].Reason != metav1.StatusReasonExpired {
		t.Fatalf("onError got %+v, want one Status with code 410, reason Expired", got)
	}
	if lastType != watch.Error || lastObj != any(got[0]) {
		t.Errorf("the caller got %v %T, want the same ERROR Status", lastType, lastObj)
	}
}

// TestLogWatchStatus: a 410 is an info line that says the host lists again;
// other statuses are warnings.
func TestLogWatchStatus(t *testing.T) {
	for _, tc := range []struct {
		st   metav1.Status
		want string
	}{
		{metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}, "level=INFO msg=\"watch fell behind the API server's history (410 Gone); listing the objects again\""},
		{metav1.Status{Code: 500, Reason: metav1.StatusReasonInternalError, Message: "boom"}, "level=WARN msg=\"watch stream reported an error; resuming it\""},
	} {
		var buf bytes.Buffer
		c := &Client{log: slog.New(slog.NewTextHandler(&buf, nil))}
		c.logWatchStatus("kopfexamples.v1.kopf.dev", &tc.st)
		if !strings.Contains(buf.String(), tc.want) || !strings.Contains(buf.String(), tc.st.Message) {
			t.Errorf("code %d logged %q, want %q with the message", tc.st.Code, buf.String(), tc.want)
		}
	}
}
