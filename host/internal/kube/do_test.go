package kube

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestCheckRequest(t *testing.T) {
	tests := []struct {
		req abi.KubeRequest
		ok  bool
	}{
		{abi.KubeRequest{Verb: abi.VerbGet, Version: "v1", Resource: "pods", Name: "p"}, true},
		{abi.KubeRequest{Verb: abi.VerbList, Version: "v1", Resource: "pods"}, true},
		{abi.KubeRequest{Verb: "watch", Version: "v1", Resource: "pods"}, false},
		{abi.KubeRequest{Verb: abi.VerbGet, Version: "v1", Resource: "pods"}, false},
		{abi.KubeRequest{Verb: abi.VerbList, Resource: "pods"}, false},
		{abi.KubeRequest{Verb: abi.VerbCreate, Version: "v1", Resource: "pods"}, false},
		{abi.KubeRequest{Verb: abi.VerbApply, Version: "v1", Resource: "pods", Body: []byte(`{}`)}, true},
		{abi.KubeRequest{Verb: abi.VerbDelete, Version: "v1", Resource: "pods"}, false},
	}
	for _, tt := range tests {
		if err := checkRequest(tt.req); (err == nil) != tt.ok {
			t.Errorf("checkRequest(%+v) = %v, want ok %v", tt.req, err, tt.ok)
		}
	}
}

func TestHostError(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		err    error
		code   int
		origin string
	}{
		{wrapAPI(reqInfo{verb: "get"}, apierrors.NewNotFound(gr, "x")), 404, abi.OriginCluster},
		{wrapAPI(reqInfo{verb: "get"}, apierrors.NewForbidden(gr, "x", errors.New("no"))), 403, abi.OriginCluster},
		{wrapAPI(reqInfo{verb: "create"}, apierrors.NewAlreadyExists(gr, "x")), 409, abi.OriginCluster},
		{fmt.Errorf("kube: %w", fmt.Errorf("resource x: %w", ErrNotServed)), 404, abi.OriginCluster},
		{context.DeadlineExceeded, 504, abi.OriginHost},
		{wrapAPI(reqInfo{verb: "get"}, errors.New("connection refused")), 503, abi.OriginCluster},
	}
	for _, tt := range tests {
		got := hostError(tt.err)
		if got.Code != tt.code || got.Origin != tt.origin || got.Message == "" {
			t.Errorf("hostError(%v) = %+v; want code %d origin %s", tt.err, got, tt.code, tt.origin)
		}
	}
	// The guest's error names the call and the code: the message is the
	// server's words alone, said once.
	err := wrapAPI(reqInfo{verb: "patch", resource: "pods.v1", namespace: "ns", name: "x"},
		apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", nil))
	if got := hostError(err); got.Message != `Pod "x" is invalid` {
		t.Errorf("the message of a refused patch: %q; want the server's alone", got.Message)
	}
}
