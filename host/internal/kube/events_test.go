package kube

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func TestCutMessage(t *testing.T) {
	tests := []struct {
		msg  string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"0123456789abcdef", 11, "0123...cdef"},
	}
	for _, tt := range tests {
		if got := cutMessage(tt.msg, tt.max); got != tt.want {
			t.Errorf("cutMessage(%q, %d) = %q, want %q", tt.msg, tt.max, got, tt.want)
		}
	}
	long := strings.Repeat("é", 1000) // 2000 bytes
	got := cutMessage(long, maxEventMessage)
	if len(got) > maxEventMessage || !utf8.ValidString(got) || !strings.Contains(got, "...") {
		t.Errorf("cutMessage of a long UTF-8 message: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestEventBody(t *testing.T) {
	c := &Client{posting: settings.Default().Posting, instance: "inst"}
	c.posting.ReportingComponent = "comp"
	about := ObjectRef{APIVersion: "kopf.dev/v1", Kind: "KopfExample", Namespace: "ns", Name: "x", UID: "u1"}
	body := c.eventBody("ns", about, abi.EventRequest{Reason: "Done", Message: "ok"}, time.Unix(0, 0))
	obj := body.Object
	inv := obj["involvedObject"].(map[string]any)
	if obj["type"] != "Normal" || obj["reason"] != "Done" || obj["reportingComponent"] != "comp" ||
		obj["reportingInstance"] != "inst" || inv["uid"] != "u1" || inv["namespace"] != "ns" ||
		obj["firstTimestamp"] != "1970-01-01T00:00:00Z" || body.GetGenerateName() != "kopf-event-" {
		t.Errorf("event body = %v", obj)
	}
	c.posting.EventNamePrefix = "acme-"
	if got := c.eventBody("ns", about, abi.EventRequest{Reason: "Done"}, time.Unix(0, 0)).GetGenerateName(); got != "acme-" {
		t.Errorf("generateName = %q with posting.eventNamePrefix acme-", got)
	}
}
