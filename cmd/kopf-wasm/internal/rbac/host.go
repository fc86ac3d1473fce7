package rbac

import (
	"fmt"
	"strings"
)

// PeeringGroups are the API groups of Kopf's peering resources: kopf.dev
// and the legacy zalando.org (the host uses the first the cluster serves).
var PeeringGroups = []string{"kopf.dev", "zalando.org"}

// rules are the host's rules for its features: those of the role (own),
// and those of the certificate's Secret when they belong in a Role of
// another namespace (secret).
func (h Host) rules(scope Scope) (own, secret []Rule, err error) {
	if !h.Standalone {
		resources := []string{"clusterkopfpeerings", "kopfpeerings"}
		if scope.Namespace != "" {
			resources = resources[1:] // a Role cannot grant the cluster-scoped ones
		}
		own = append(own, Rule{APIGroups: PeeringGroups, Resources: resources, Verbs: []string{"get", "list", "patch", "watch"}})
	}
	if h.CertSecret == "" {
		return own, nil, nil
	}
	ns, name, ok := strings.Cut(h.CertSecret, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, nil, fmt.Errorf("rbac: the webhook certificate Secret %q is not namespace/name", h.CertSecret)
	}
	secret = []Rule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
		// create cannot be restricted by name: RBAC authorizes it before
		// the object, and so its name, is read.
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
	}
	if scope.Namespace == ns {
		return append(own, secret...), nil, nil
	}
	return own, secret, nil
}

// secretObjects are the Role and RoleBinding, named name-webhook-cert,
// that grant rules on the Secret "namespace/secret" to the ServiceAccount
// of the objects named name.
func secretObjects(name string, scope Scope, secret string, rules []Rule) []Object {
	ns, _, _ := strings.Cut(secret, "/")
	sa := objects(name, scope, nil)[0].Metadata
	roleName := name + "-webhook-cert"
	labels := map[string]string{"app.kubernetes.io/managed-by": "kopf-wasm"}
	return []Object{
		{APIVersion: APIGroup + "/v1", Kind: "Role", Metadata: Meta{Name: roleName, Namespace: ns, Labels: labels}, Rules: rules},
		{APIVersion: APIGroup + "/v1", Kind: "RoleBinding", Metadata: Meta{Name: roleName, Namespace: ns, Labels: labels},
			RoleRef:  &RoleRef{APIGroup: APIGroup, Kind: "Role", Name: roleName},
			Subjects: []Subject{{Kind: "ServiceAccount", Name: name, Namespace: sa.Namespace}}},
	}
}
