package rbac

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestPlural(t *testing.T) {
	tests := []struct {
		group, name, want string
		guessed           bool
	}{
		{"kopf.dev", "kopfexamples", "kopfexamples", false},
		{"", "pods", "pods", false},
		{"", "Pod", "pods", false},
		{"", "po", "pods", false},
		{"", "cm", "configmaps", false},
		{"apps", "StatefulSet", "statefulsets", false},
		{"apps", "sts", "statefulsets", false},
		{"batch", "CronJob", "cronjobs", false},
		{"networking.k8s.io", "Ingress", "ingresses", false},
		{"kopf.dev", "KopfExample", "kopfexamples", true},
		{"example.com", "Policy", "policies", true},
		{"example.com", "Key", "keys", true},
		{"example.com", "Box", "boxes", true},
		{"example.com", "Match", "matches", true},
		{"example.com", "pod", "pod", false}, // not the core group: taken as given
	}
	for _, tt := range tests {
		got, note := Plural(abi.ResourceSelector{Group: tt.group, Name: tt.name})
		if got != tt.want || (note != "") != tt.guessed {
			t.Errorf("Plural(%q, %q) = %q, note %q; want %q, guessed %v", tt.group, tt.name, got, note, tt.want, tt.guessed)
		}
	}
}

func manifest(name string, handlers []abi.HandlerSpec, perms ...abi.KubePermission) abi.Manifest {
	return abi.Manifest{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: name}, Handlers: handlers,
		Permissions: abi.Permissions{Kubernetes: perms}}
}

func handler(id string, kind abi.HandlerKind, group, name string) abi.HandlerSpec {
	h := abi.HandlerSpec{ID: id, Kind: kind}
	if !kind.IsActivity() {
		h.Resource = &abi.ResourceSelector{Group: group, Version: "v1", Name: name}
	}
	return h
}

func rule(group string, resources []string, verbs ...string) Rule {
	return Rule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
}

func TestGenerateRules(t *testing.T) {
	kex := []abi.HandlerSpec{
		handler("create_fn", abi.KindCreate, "kopf.dev", "kopfexamples"),
		handler("update_fn", abi.KindUpdate, "kopf.dev", "kopfexamples"),
		handler("startup", abi.KindStartup, "", ""),
	}
	hostOwn := []Rule{
		rule("", []string{"events"}, "create"),
		rule("", []string{"namespaces"}, "list", "watch"),
		rule("kopf.dev", []string{"kopfexamples"}, "get", "list", "patch", "watch"),
		rule("kopf.dev", []string{"kopfexamples/status"}, "patch"),
		rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, "list", "watch"), // a cluster role: the CRDs the host follows
	}
	// cluster is hostOwn in the order of a ClusterRole's rules.
	cluster := []Rule{hostOwn[0], hostOwn[1], hostOwn[4], hostOwn[2], hostOwn[3]}
	tests := []struct {
		name   string
		ns     string
		ms     []abi.Manifest
		want   []Rule
		guests int
	}{
		{"handled resources only, cluster", "", []abi.Manifest{manifest("kex", kex)}, cluster, 0},
		{"handled resources only, namespace", "team-a", []abi.Manifest{manifest("kex", kex)},
			[]Rule{hostOwn[0], hostOwn[2], hostOwn[3]}, 0},
		{"declared permissions merge by group and verbs", "", []abi.Manifest{manifest("db",
			[]abi.HandlerSpec{handler("h", abi.KindCreate, "", "ConfigMap")},
			abi.KubePermission{Group: "apps", Resource: "statefulsets", Verbs: []string{"get", "create", "patch"}},
			abi.KubePermission{Group: "", Resource: "services", Verbs: []string{"create", "get", "patch"}},
			abi.KubePermission{Group: "", Resource: "events", Verbs: []string{"create"}},
			abi.KubePermission{Group: "batch", Resource: "cronjobs", Verbs: []string{"delete", "*"}},
		)}, []Rule{
			rule("", []string{"events"}, "create"),
			rule("", []string{"services"}, "create", "get", "patch"),
			rule("", []string{"configmaps"}, "get", "list", "patch", "watch"),
			rule("", []string{"namespaces"}, "list", "watch"),
			rule("", []string{"configmaps/status"}, "patch"),
			hostOwn[4],
			rule("apps", []string{"statefulsets"}, "create", "get", "patch"),
			rule("batch", []string{"cronjobs"}, "*"),
		}, 0},
		{"several modules, a guessed plural", "", []abi.Manifest{
			manifest("a", []abi.HandlerSpec{handler("a", abi.KindTimer, "kopf.dev", "KopfExample")}),
			manifest("b", []abi.HandlerSpec{handler("b", abi.KindDaemon, "example.com", "widgets")}),
		}, []Rule{
			hostOwn[0], hostOwn[1], hostOwn[4],
			rule("example.com", []string{"widgets"}, "get", "list", "patch", "watch"),
			rule("example.com", []string{"widgets/status"}, "patch"),
			hostOwn[2], hostOwn[3],
		}, 1},
		{"webhook handlers: the managed configurations, nothing on their resource", "", []abi.Manifest{
			manifest("w", []abi.HandlerSpec{
				handler("v", abi.KindValidate, "example.com", "widgets"),
				handler("m", abi.KindMutate, "example.com", "widgets"),
			}),
		}, []Rule{
			hostOwn[0], hostOwn[1],
			rule("admissionregistration.k8s.io", []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, "create", "patch"),
			hostOwn[4],
		}, 0},
		{"convert handlers: patch on the CRDs", "", []abi.Manifest{
			manifest("c", []abi.HandlerSpec{handler("c", abi.KindConvert, "example.com", "widgets")}),
		}, []Rule{
			hostOwn[0], hostOwn[1],
			rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, "list", "patch", "watch"),
		}, 0},
		{"a category and everything in a group: every resource, and the CRDs", "", []abi.Manifest{
			manifest("c", []abi.HandlerSpec{
				{ID: "all", Kind: abi.KindEvent, Resource: &abi.ResourceSelector{Category: "all"}},
				{ID: "kopf", Kind: abi.KindCreate, Resource: &abi.ResourceSelector{Group: "kopf.dev", Everything: true}},
			}),
		}, []Rule{
			hostOwn[0], hostOwn[1],
			rule("*", []string{"*"}, "get", "list", "patch", "watch"),
			rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, "list", "watch"),
			rule("kopf.dev", []string{"*"}, "get", "list", "patch", "watch"),
		}, 2},
		{"a category in a namespace: a note on the CRDs", "team-a", []abi.Manifest{
			manifest("c", []abi.HandlerSpec{{ID: "all", Kind: abi.KindEvent, Resource: &abi.ResourceSelector{Category: "all"}}}),
		}, []Rule{hostOwn[0], rule("*", []string{"*"}, "get", "list", "patch", "watch")}, 2},
		{"webhook handlers in a namespace: a note", "team-a", []abi.Manifest{
			manifest("w", []abi.HandlerSpec{handler("v", abi.KindValidate, "example.com", "widgets")}),
		}, []Rule{hostOwn[0]}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, notes, err := Generate("op", Scope{Namespace: tt.ns}, Host{Standalone: true}, tt.ms...)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 3 || !reflect.DeepEqual(objs[1].Rules, tt.want) {
				t.Errorf("rules:\n got %+v\nwant %+v", objs[1].Rules, tt.want)
			}
			if len(notes) != tt.guests {
				t.Errorf("notes %q; want %d", notes, tt.guests)
			}
		})
	}
}

// The host's features: Kopf's peering unless standalone (a Role only
// kopfpeerings), and the certificate's Secret in the role when it lives
// in the role's namespace.
func TestGenerateHostRules(t *testing.T) {
	kex := []abi.Manifest{manifest("kex", []abi.HandlerSpec{handler("create_fn", abi.KindCreate, "kopf.dev", "kopfexamples")})}
	events := rule("", []string{"events"}, "create")
	resources := []Rule{rule("kopf.dev", []string{"kopfexamples"}, "get", "list", "patch", "watch"), rule("kopf.dev", []string{"kopfexamples/status"}, "patch")}
	cluster := append([]Rule{events, rule("", []string{"namespaces"}, "list", "watch"),
		rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, "list", "watch")}, resources...)
	namespaced := append([]Rule{events}, resources...)
	peering := func(resources ...string) Rule {
		return Rule{APIGroups: []string{"kopf.dev", "zalando.org"}, Resources: resources, Verbs: []string{"get", "list", "patch", "watch"}}
	}
	secret := []Rule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"cert"}, Verbs: []string{"get", "update"}},
		rule("", []string{"secrets"}, "create"),
	}
	tests := []struct {
		name string
		ns   string
		host Host
		want []Rule
	}{
		{"peering, cluster", "", Host{}, slices.Concat(cluster, []Rule{peering("clusterkopfpeerings", "kopfpeerings")})},
		{"peering, namespace: kopfpeerings only", "team-a", Host{}, slices.Concat(namespaced, []Rule{peering("kopfpeerings")})},
		{"standalone", "", Host{Standalone: true}, cluster},
		{"a certificate Secret in the Role's namespace", "ops", Host{Standalone: true, CertSecret: "ops/cert"}, slices.Concat(namespaced, secret)},
		{"a certificate Secret in another namespace: not in the role", "team-a", Host{Standalone: true, CertSecret: "ops/cert"}, namespaced},
		{"both", "ops", Host{CertSecret: "ops/cert"}, slices.Concat(namespaced, []Rule{peering("kopfpeerings")}, secret)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, _, err := Generate("op", Scope{Namespace: tt.ns}, tt.host, kex...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(objs[1].Rules, tt.want) {
				t.Errorf("rules:\n got %+v\nwant %+v", objs[1].Rules, tt.want)
			}
		})
	}
}

func TestGenerateObjects(t *testing.T) {
	ms := manifest("kex", []abi.HandlerSpec{handler("c", abi.KindCreate, "kopf.dev", "kopfexamples")})
	tests := []struct {
		scope                   Scope
		saNS, role, binding, ns string
	}{
		{Scope{}, "default", "ClusterRole", "ClusterRoleBinding", ""},
		{Scope{ServiceAccountNamespace: "ops"}, "ops", "ClusterRole", "ClusterRoleBinding", ""},
		{Scope{Namespace: "team-a", ServiceAccountNamespace: "ignored"}, "team-a", "Role", "RoleBinding", "team-a"},
	}
	for _, tt := range tests {
		objs, _, err := Generate("op", tt.scope, Host{}, ms)
		if err != nil {
			t.Fatal(err)
		}
		sa, role, binding := objs[0], objs[1], objs[2]
		want := Subject{Kind: "ServiceAccount", Name: "op", Namespace: tt.saNS}
		if sa.Kind != "ServiceAccount" || sa.Metadata.Namespace != tt.saNS || role.Kind != tt.role || role.Metadata.Namespace != tt.ns ||
			binding.Kind != tt.binding || binding.Metadata.Namespace != tt.ns ||
			*binding.RoleRef != (RoleRef{APIGroup: APIGroup, Kind: tt.role, Name: "op"}) || !reflect.DeepEqual(binding.Subjects, []Subject{want}) {
			t.Errorf("%+v: objects %+v", tt.scope, objs)
		}
	}
}

func TestGenerateBadInput(t *testing.T) {
	tests := []struct {
		name string
		m    abi.Manifest
		want string
	}{
		{"handler without a resource", manifest("m", []abi.HandlerSpec{{ID: "h", Kind: abi.KindCreate}}), "handler h has no resource"},
		{"permission without verbs", manifest("m", nil, abi.KubePermission{Resource: "pods"}), "needs a resource and verbs"},
		{"permission without resource", manifest("m", nil, abi.KubePermission{Verbs: []string{"get"}}), "needs a resource and verbs"},
	}
	for _, tt := range tests {
		if _, _, err := Generate("op", Scope{}, Host{}, tt.m); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want %q", tt.name, err, tt.want)
		}
	}
	if _, _, err := Generate("", Scope{}, Host{}); err == nil {
		t.Error("an empty name: no error")
	}
	for _, secret := range []string{"cert", "ops/", "/cert", "a/b/c"} {
		if _, _, err := Generate("op", Scope{}, Host{CertSecret: secret}); err == nil || !strings.Contains(err.Error(), "is not namespace/name") {
			t.Errorf("CertSecret %q: error %v", secret, err)
		}
	}
}

// A certificate Secret outside the role's namespace gets a Role and a
// RoleBinding of its own there, for the role's ServiceAccount.
func TestGenerateSecretRole(t *testing.T) {
	ms := manifest("kex", []abi.HandlerSpec{handler("c", abi.KindCreate, "kopf.dev", "kopfexamples")})
	for _, scope := range []Scope{{ServiceAccountNamespace: "kopf-wasm"}, {Namespace: "team-a"}} {
		objs, _, err := Generate("op", scope, Host{CertSecret: "ops/cert"}, ms)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 5 {
			t.Fatalf("%+v: %d objects", scope, len(objs))
		}
		role, binding := objs[3], objs[4]
		want := []Rule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"cert"}, Verbs: []string{"get", "update"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		}
		if role.Kind != "Role" || role.Metadata.Name != "op-webhook-cert" || role.Metadata.Namespace != "ops" ||
			!reflect.DeepEqual(role.Rules, want) {
			t.Errorf("%+v: role %+v", scope, role)
		}
		sa := objs[0].Metadata
		if binding.Kind != "RoleBinding" || binding.Metadata.Namespace != "ops" || *binding.RoleRef != (RoleRef{APIGroup: APIGroup, Kind: "Role", Name: "op-webhook-cert"}) ||
			!reflect.DeepEqual(binding.Subjects, []Subject{{Kind: "ServiceAccount", Name: "op", Namespace: sa.Namespace}}) {
			t.Errorf("%+v: binding %+v", scope, binding)
		}
	}
}
