package wasmrt

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// checkPermission returns nil if perms allow req, or the 403 that the
// guest gets instead of a response from the cluster. Matching follows RBAC:
// "*" matches any group, resource or verb; a resource "pods" does not cover
// its subresources, "pods/status" names one, "*/status" names it for every
// resource; apply is checked as patch.
func checkPermission(module string, perms []abi.KubePermission, req *abi.KubeRequest) *abi.HostError {
	verb := rbacVerb(req.Verb)
	if verb == "" {
		return &abi.HostError{
			Code: http.StatusBadRequest, Reason: "BadRequest", Origin: abi.OriginHost,
			Message: fmt.Sprintf("unknown verb %q (get, list, create, update, patch, apply, delete)", req.Verb),
		}
	}
	resource := req.Resource
	if req.Subresource != "" {
		resource += "/" + req.Subresource
	}
	for i := range perms {
		if permits(&perms[i], req.Group, resource, verb) {
			return nil
		}
	}
	return &abi.HostError{
		Code: http.StatusForbidden, Reason: "Forbidden", Origin: abi.OriginHost,
		Message: fmt.Sprintf("module %q did not declare the permission to %s %s in group %q: "+
			"add {group: %q, resource: %q, verbs: [%q]} to its manifest's permissions and rebuild it",
			module, verb, resource, req.Group, req.Group, resource, verb),
	}
}

// rbacVerb maps a request verb to the RBAC verb that allows it ("" if unknown).
func rbacVerb(v abi.KubeVerb) string {
	switch v {
	case abi.VerbApply:
		return string(abi.VerbPatch)
	case abi.VerbGet, abi.VerbList, abi.VerbCreate, abi.VerbUpdate, abi.VerbPatch, abi.VerbDelete:
		return string(v)
	}
	return ""
}

func permits(p *abi.KubePermission, group, resource, verb string) bool {
	return (p.Group == "*" || p.Group == group) &&
		resourceMatches(p.Resource, resource) &&
		verbMatches(p.Verbs, verb)
}

func resourceMatches(rule, resource string) bool {
	if rule == "*" || rule == resource {
		return true
	}
	// "*/status" allows the status subresource of any resource.
	if sub, ok := strings.CutPrefix(rule, "*/"); ok {
		_, reqSub, hasSub := strings.Cut(resource, "/")
		return hasSub && reqSub == sub
	}
	return false
}

func verbMatches(verbs []string, verb string) bool {
	for _, v := range verbs {
		if v == "*" || v == verb {
			return true
		}
	}
	return false
}
