package kopf

import (
	"fmt"
	"sort"
	"strings"
)

// builtins are the resources the Kubernetes API serves itself, by group,
// as plural:Kind. A [Permit] in one of these groups is checked against it:
// RBAC matches plurals exactly, so a singular, a kind or a typo would only
// show up as a 403 at run time.
var builtins = map[string]string{
	"": "bindings:Binding componentstatuses:ComponentStatus configmaps:ConfigMap endpoints:Endpoints " +
		"events:Event limitranges:LimitRange namespaces:Namespace nodes:Node " +
		"persistentvolumeclaims:PersistentVolumeClaim persistentvolumes:PersistentVolume pods:Pod " +
		"podtemplates:PodTemplate replicationcontrollers:ReplicationController resourcequotas:ResourceQuota " +
		"secrets:Secret serviceaccounts:ServiceAccount services:Service",
	"apps": "controllerrevisions:ControllerRevision daemonsets:DaemonSet deployments:Deployment " +
		"replicasets:ReplicaSet statefulsets:StatefulSet",
	"batch":                        "cronjobs:CronJob jobs:Job",
	"autoscaling":                  "horizontalpodautoscalers:HorizontalPodAutoscaler",
	"policy":                       "poddisruptionbudgets:PodDisruptionBudget",
	"networking.k8s.io":            "ingressclasses:IngressClass ingresses:Ingress networkpolicies:NetworkPolicy ipaddresses:IPAddress servicecidrs:ServiceCIDR",
	"rbac.authorization.k8s.io":    "clusterrolebindings:ClusterRoleBinding clusterroles:ClusterRole rolebindings:RoleBinding roles:Role",
	"storage.k8s.io":               "csidrivers:CSIDriver csinodes:CSINode csistoragecapacities:CSIStorageCapacity storageclasses:StorageClass volumeattachments:VolumeAttachment volumeattributesclasses:VolumeAttributesClass",
	"coordination.k8s.io":          "leases:Lease",
	"events.k8s.io":                "events:Event",
	"discovery.k8s.io":             "endpointslices:EndpointSlice",
	"scheduling.k8s.io":            "priorityclasses:PriorityClass",
	"node.k8s.io":                  "runtimeclasses:RuntimeClass",
	"certificates.k8s.io":          "certificatesigningrequests:CertificateSigningRequest",
	"apiextensions.k8s.io":         "customresourcedefinitions:CustomResourceDefinition",
	"apiregistration.k8s.io":       "apiservices:APIService",
	"flowcontrol.apiserver.k8s.io": "flowschemas:FlowSchema prioritylevelconfigurations:PriorityLevelConfiguration",
	"admissionregistration.k8s.io": "mutatingwebhookconfigurations:MutatingWebhookConfiguration " +
		"validatingwebhookconfigurations:ValidatingWebhookConfiguration " +
		"validatingadmissionpolicies:ValidatingAdmissionPolicy validatingadmissionpolicybindings:ValidatingAdmissionPolicyBinding",
	"authentication.k8s.io": "tokenreviews:TokenReview selfsubjectreviews:SelfSubjectReview",
	"authorization.k8s.io": "subjectaccessreviews:SubjectAccessReview selfsubjectaccessreviews:SelfSubjectAccessReview " +
		"localsubjectaccessreviews:LocalSubjectAccessReview selfsubjectrulesreviews:SelfSubjectRulesReview",
}

// knownResource is a plural the module can be sure of, with its singular.
type knownResource struct {
	group, plural, singular string
	builtin                 bool
}

// permitProblems checks the module's permissions against the built-in
// resources and the resources of its own handlers, and says "did you
// mean" for a singular, a kind, a typo or a built-in in the wrong group.
// A resource of another custom group is not checked: the module may
// permit any custom resource of the cluster.
func (r *registry) permitProblems() []string {
	known := knownResources(r)
	var out []string
	for _, p := range r.permissions.Kubernetes {
		base, sub, _ := strings.Cut(p.Resource, "/")
		if base == "*" || base == "" {
			continue
		}
		if k, ok := permitHint(known, p.Group, base); ok {
			res := k.plural
			if sub != "" {
				res += "/" + sub
			}
			hint := fmt.Sprintf("%q", res)
			if k.group != p.Group {
				hint = fmt.Sprintf("Permit(%q, %q, ...)", k.group, res)
			}
			out = append(out, fmt.Sprintf("Permit(%q, %q, ...): no such resource; did you mean %s?", p.Group, p.Resource, hint))
		}
	}
	return out
}

func knownResources(r *registry) []knownResource {
	var known []knownResource
	groups := make([]string, 0, len(builtins))
	for g := range builtins {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		for _, pk := range strings.Fields(builtins[g]) {
			plural, kind, _ := strings.Cut(pk, ":")
			known = append(known, knownResource{group: g, plural: plural, singular: strings.ToLower(kind), builtin: true})
		}
	}
	for _, h := range r.handlers {
		if s := h.spec.Resource; s != nil && s.Name != "" {
			known = append(known, knownResource{group: s.Group, plural: s.Name, singular: singular(s.Name)})
		}
	}
	return known
}

// permitHint suggests the resource meant by (group, base), or false when
// it is right or cannot be told.
func permitHint(known []knownResource, group, base string) (knownResource, bool) {
	_, builtinGroup := builtins[group]
	for _, k := range known {
		if k.group == group && k.plural == base {
			return knownResource{}, false // exact
		}
	}
	lower := strings.ToLower(base)
	for _, k := range known {
		if k.group == group && (k.plural == lower || k.singular == lower) {
			return k, true
		}
	}
	if builtinGroup {
		for _, k := range known {
			if k.builtin && (k.plural == lower || k.singular == lower) {
				return k, true
			}
		}
	}
	var best knownResource
	dist := 3
	for _, k := range known {
		limit := 2 // built-in groups are listed whole
		if !builtinGroup {
			limit = 1 // a custom group: only next to the module's own resources
			if len(lower) < 6 {
				continue
			}
		}
		if k.group != group {
			continue
		}
		if d := editDistance(lower, k.plural); d <= limit && d < dist {
			best, dist = k, d
		}
	}
	return best, best.plural != ""
}

// singular guesses a plural's singular, for the module's own resources.
func singular(plural string) string {
	switch {
	case strings.HasSuffix(plural, "ies"):
		return strings.TrimSuffix(plural, "ies") + "y"
	case strings.HasSuffix(plural, "sses"), strings.HasSuffix(plural, "xes"),
		strings.HasSuffix(plural, "ches"), strings.HasSuffix(plural, "shes"):
		return strings.TrimSuffix(plural, "es")
	}
	return strings.TrimSuffix(plural, "s")
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
