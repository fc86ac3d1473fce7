// Package rbac turns module manifests into the Kubernetes RBAC objects an
// operator needs: a ServiceAccount, a ClusterRole or Role with the host's
// own needs plus the modules' declared permissions, and the binding between
// them. It works offline, from the manifests alone.
//
// The host's own needs, for every resource a handler selects: get, list,
// watch and patch on the resource (watching, finalizers, progress and
// results) and patch on its status subresource; create on core events (the
// events the host and the handlers post). A ClusterRole also gets list and
// watch on namespaces, which the host uses to follow namespace patterns
// (-n 'team-*'), and list and watch on customresourcedefinitions, which the
// host follows to serve resources created while it runs. Validating and mutating handlers get their objects in the
// admission reviews and need nothing on their resources; when a module has
// any, a ClusterRole gets create and patch on validatingwebhookconfigurations
// and mutatingwebhookconfigurations, for the managed configurations (a Role
// cannot grant them: they are cluster-scoped); convert handlers, patch on
// customresourcedefinitions (their spec.conversion). Discovery (/api, /apis) needs no rule: every
// authenticated user may read it (the system:discovery role).
//
// The host's features ([Host]): Kopf's peering, on by default, gets get,
// list, watch and patch on the peering objects of kopf.dev and the legacy
// zalando.org (clusterkopfpeerings and kopfpeerings; a Role only
// kopfpeerings, in its namespace); none when the host runs standalone. A
// webhook certificate kept in a Secret (run --webhook-cert-secret) gets
// get and update on that one Secret (resourceNames) and create on Secrets
// in its namespace, in a Role there (or in the Role itself, when it lives
// in that namespace): RBAC cannot restrict create by name, since the
// object's name is not known when the request is authorized.
package rbac

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// APIGroup is the group of the RBAC objects.
const APIGroup = "rbac.authorization.k8s.io"

// Scope says where the permissions apply.
type Scope struct {
	// Namespace, when set, makes a Role and a RoleBinding in it (and puts
	// the ServiceAccount there); empty makes a ClusterRole and a
	// ClusterRoleBinding.
	Namespace string
	// ServiceAccountNamespace is the ServiceAccount's namespace for a
	// cluster scope; ignored with Namespace. Default "default".
	ServiceAccountNamespace string
}

// Host says which of the host's own features the rules cover.
type Host struct {
	// Standalone: the host runs without Kopf's peering (run --standalone,
	// or --leader-elect or --shards without -P), so it needs no rule on
	// the peering objects.
	Standalone bool
	// CertSecret, "namespace/name", is the Secret of run's
	// --webhook-cert-secret; empty: none.
	CertSecret string
}

// Rule is one RBAC policy rule.
type Rule struct {
	APIGroups     []string `json:"apiGroups"`
	Resources     []string `json:"resources"`
	ResourceNames []string `json:"resourceNames,omitempty"`
	Verbs         []string `json:"verbs"`
}

// Meta is the metadata the generated objects carry.
type Meta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// Object is one generated object; the fields that do not apply to its kind
// stay empty.
type Object struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   Meta      `json:"metadata"`
	Rules      []Rule    `json:"rules,omitempty"`
	RoleRef    *RoleRef  `json:"roleRef,omitempty"`
	Subjects   []Subject `json:"subjects,omitempty"`
}

// RoleRef names the role of a binding.
type RoleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Subject is who a binding grants the role to.
type Subject struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Generate returns the ServiceAccount, the role and the binding, all named
// name, for the manifests in scope and the host's features; with
// host.CertSecret in another namespace than the role's, also a Role and a
// RoleBinding there, named name-webhook-cert. Notes are warnings for the
// user (plural names that were guessed). It fails on a manifest it cannot
// turn into rules (a handler without a resource name, a permission without
// verbs), or on a CertSecret that is not namespace/name.
func Generate(name string, scope Scope, host Host, manifests ...abi.Manifest) (objs []Object, notes []string, err error) {
	if name == "" {
		return nil, nil, fmt.Errorf("rbac: empty name")
	}
	perms := map[[2]string]map[string]bool{}
	webhooks, conversions, many := false, false, false
	grant := func(group, resource string, verbs ...string) {
		k := [2]string{group, resource}
		if perms[k] == nil {
			perms[k] = map[string]bool{}
		}
		for _, v := range verbs {
			perms[k][v] = true
		}
	}
	for _, m := range manifests {
		for _, h := range m.Handlers {
			if h.Kind.IsActivity() {
				continue
			}
			if h.Kind.IsWebhook() {
				webhooks = true
				continue
			}
			if h.Kind == abi.KindConvert {
				conversions = true
				continue
			}
			if h.Resource != nil && h.Resource.Many() {
				// A category or everything: any resource of the group
				// (of every group without one) may be served.
				many = true
				group := h.Resource.Group
				if group == "" {
					group = "*"
				}
				grant(group, "*", "get", "list", "watch", "patch")
				notes = append(notes, fmt.Sprintf("module %s, handler %s selects %s: granted on every resource of %s; narrow it to the resources you expect",
					m.Module.Name, h.ID, manyWhat(*h.Resource), groupWhat(h.Resource.Group)))
				continue
			}
			if h.Resource == nil || h.Resource.Name == "" {
				return nil, nil, fmt.Errorf("rbac: module %s: handler %s has no resource", m.Module.Name, h.ID)
			}
			plural, note := Plural(*h.Resource)
			if note != "" {
				notes = append(notes, fmt.Sprintf("module %s, handler %s: %s", m.Module.Name, h.ID, note))
			}
			grant(h.Resource.Group, plural, "get", "list", "watch", "patch")
			grant(h.Resource.Group, plural+"/status", "patch")
		}
		for _, p := range m.Permissions.Kubernetes {
			if p.Resource == "" || len(p.Verbs) == 0 {
				return nil, nil, fmt.Errorf("rbac: module %s: permission %q in group %q needs a resource and verbs", m.Module.Name, p.Resource, p.Group)
			}
			grant(p.Group, p.Resource, p.Verbs...)
		}
	}
	grant("", "events", "create")
	if scope.Namespace == "" {
		grant("", "namespaces", "list", "watch")
	}
	if scope.Namespace == "" {
		// The host watches the CRDs to serve resources created or removed
		// while it runs (settings.watching.scanCRDs): those of categories
		// and of everything, and named ones that appear later.
		grant("apiextensions.k8s.io", "customresourcedefinitions", "list", "watch")
	}
	if many {
		if scope.Namespace != "" {
			notes = append(notes, "the modules select categories or everything: a Role cannot grant the cluster-scoped CRDs "+
				"the host watches to follow them (it then serves the resources found at its start); use a ClusterRole (no --namespace)")
		}
	}
	if conversions {
		if scope.Namespace == "" {
			grant("apiextensions.k8s.io", "customresourcedefinitions", "patch")
		} else {
			notes = append(notes, "the modules have convert handlers: a Role cannot grant the cluster-scoped CRDs "+
				"whose spec.conversion the host manages with admission.managed; use a ClusterRole (no --namespace)")
		}
	}
	if webhooks {
		if scope.Namespace == "" {
			grant("admissionregistration.k8s.io", "validatingwebhookconfigurations", "create", "patch")
			grant("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "create", "patch")
		} else {
			notes = append(notes, "the modules have webhook handlers: a Role cannot grant the cluster-scoped webhook configurations "+
				"that the host manages with admission.managed; use a ClusterRole (no --namespace) or configure the webhooks yourself")
		}
	}
	own, secret, err := host.rules(scope)
	if err != nil {
		return nil, nil, err
	}
	objs = objects(name, scope, append(rules(perms), own...))
	if len(secret) > 0 {
		objs = append(objs, secretObjects(name, scope, host.CertSecret, secret)...)
	}
	return objs, slices.Compact(notes), nil
}

// rules folds the permissions into rules: one per group and set of verbs,
// sorted by group, then by verbs; "*" among the verbs stands alone.
func rules(perms map[[2]string]map[string]bool) []Rule {
	type key struct{ group, verbs string }
	byKey := map[key][]string{}
	for k, vs := range perms {
		verbs := make([]string, 0, len(vs))
		for v := range vs {
			verbs = append(verbs, v)
		}
		if vs["*"] {
			verbs = []string{"*"}
		}
		sort.Strings(verbs)
		kk := key{k[0], strings.Join(verbs, ",")}
		byKey[kk] = append(byKey[kk], k[1])
	}
	keys := make([]key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].group != keys[j].group {
			return keys[i].group < keys[j].group
		}
		return keys[i].verbs < keys[j].verbs
	})
	out := make([]Rule, 0, len(keys))
	for _, k := range keys {
		res := byKey[k]
		sort.Strings(res)
		out = append(out, Rule{APIGroups: []string{k.group}, Resources: res, Verbs: strings.Split(k.verbs, ",")})
	}
	return out
}

// objects builds the three objects.
func objects(name string, scope Scope, rules []Rule) []Object {
	labels := map[string]string{"app.kubernetes.io/managed-by": "kopf-wasm"}
	saNS, roleKind, bindingKind := scope.Namespace, "Role", "RoleBinding"
	if scope.Namespace == "" {
		saNS, roleKind, bindingKind = scope.ServiceAccountNamespace, "ClusterRole", "ClusterRoleBinding"
		if saNS == "" {
			saNS = "default"
		}
	}
	return []Object{
		{APIVersion: "v1", Kind: "ServiceAccount", Metadata: Meta{Name: name, Namespace: saNS, Labels: labels}},
		{APIVersion: APIGroup + "/v1", Kind: roleKind, Metadata: Meta{Name: name, Namespace: scope.Namespace, Labels: labels}, Rules: rules},
		{APIVersion: APIGroup + "/v1", Kind: bindingKind, Metadata: Meta{Name: name, Namespace: scope.Namespace, Labels: labels},
			RoleRef:  &RoleRef{APIGroup: APIGroup, Kind: roleKind, Name: name},
			Subjects: []Subject{{Kind: "ServiceAccount", Name: name, Namespace: saNS}}},
	}
}

// manyWhat says what a category or everything selector selects.
func manyWhat(sel abi.ResourceSelector) string {
	if sel.Category != "" {
		return fmt.Sprintf("the category %q", sel.Category)
	}
	return "everything"
}

func groupWhat(group string) string {
	if group == "" {
		return "every API group"
	}
	return fmt.Sprintf("the API group %q", group)
}
