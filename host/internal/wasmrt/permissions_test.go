package wasmrt

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestCheckPermission(t *testing.T) {
	perms := []abi.KubePermission{
		{Group: "", Resource: "configmaps", Verbs: []string{"get", "list"}},
		{Group: "", Resource: "pods/status", Verbs: []string{"patch"}},
		{Group: "apps", Resource: "deployments", Verbs: []string{"*"}},
		{Group: "kopf.dev", Resource: "*", Verbs: []string{"get"}},
		{Group: "*", Resource: "*/scale", Verbs: []string{"update"}},
		{Group: "batch", Resource: "jobs", Verbs: []string{"patch"}},
	}
	tests := []struct {
		name string
		req  abi.KubeRequest
		code int // 0 = allowed
	}{
		{"declared get", abi.KubeRequest{Verb: abi.VerbGet, Resource: "configmaps"}, 0},
		{"declared list", abi.KubeRequest{Verb: abi.VerbList, Resource: "configmaps"}, 0},
		{"undeclared verb", abi.KubeRequest{Verb: abi.VerbDelete, Resource: "configmaps"}, http.StatusForbidden},
		{"undeclared resource", abi.KubeRequest{Verb: abi.VerbGet, Resource: "secrets"}, http.StatusForbidden},
		{"group must match", abi.KubeRequest{Verb: abi.VerbGet, Group: "example.com", Resource: "configmaps"}, http.StatusForbidden},
		{"subresource declared", abi.KubeRequest{Verb: abi.VerbPatch, Resource: "pods", Subresource: "status"}, 0},
		{"resource does not cover subresource", abi.KubeRequest{Verb: abi.VerbPatch, Resource: "pods"}, http.StatusForbidden},
		{"verb wildcard", abi.KubeRequest{Verb: abi.VerbDelete, Group: "apps", Resource: "deployments"}, 0},
		{"resource wildcard", abi.KubeRequest{Verb: abi.VerbGet, Group: "kopf.dev", Resource: "kopfexamples"}, 0},
		{"resource wildcard covers subresources", abi.KubeRequest{Verb: abi.VerbGet, Group: "kopf.dev", Resource: "kopfexamples", Subresource: "status"}, 0},
		{"subresource wildcard", abi.KubeRequest{Verb: abi.VerbUpdate, Group: "apps", Resource: "statefulsets", Subresource: "scale"}, 0},
		{"subresource wildcard needs the subresource", abi.KubeRequest{Verb: abi.VerbUpdate, Group: "apps", Resource: "statefulsets"}, http.StatusForbidden},
		{"apply counts as patch", abi.KubeRequest{Verb: abi.VerbApply, Group: "batch", Resource: "jobs"}, 0},
		{"apply needs patch", abi.KubeRequest{Verb: abi.VerbApply, Resource: "configmaps"}, http.StatusForbidden},
		{"unknown verb", abi.KubeRequest{Verb: "watch", Resource: "configmaps"}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			herr := checkPermission("m", perms, &tt.req)
			got := 0
			if herr != nil {
				got = herr.Code
				if herr.Origin != abi.OriginHost {
					t.Errorf("origin = %q, want %q", herr.Origin, abi.OriginHost)
				}
			}
			if got != tt.code {
				t.Fatalf("code = %d, want %d (%v)", got, tt.code, herr)
			}
		})
	}
}

func TestCheckPermissionMessage(t *testing.T) {
	req := abi.KubeRequest{Verb: abi.VerbApply, Version: "v1", Resource: "pods", Subresource: "status"}
	herr := checkPermission("mymodule", nil, &req)
	if herr == nil {
		t.Fatal("allowed with no permissions")
	}
	for _, want := range []string{`"mymodule"`, "patch pods/status", `group ""`, `verbs: ["patch"]`, "manifest", "rebuild"} {
		if !strings.Contains(herr.Message, want) {
			t.Errorf("message %q lacks %q", herr.Message, want)
		}
	}
	if herr.Reason != "Forbidden" {
		t.Errorf("reason = %q", herr.Reason)
	}
}
