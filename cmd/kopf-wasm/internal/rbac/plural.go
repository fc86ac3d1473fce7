package rbac

import (
	"fmt"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// builtin maps the other names of common built-in resources (kind in lower
// case, singular, short names) to their plural, per group.
var builtin = map[string]map[string]string{
	"": {
		"pod": "pods", "po": "pods",
		"service": "services", "svc": "services",
		"configmap": "configmaps", "cm": "configmaps",
		"secret":    "secrets",
		"namespace": "namespaces", "ns": "namespaces",
		"node": "nodes", "no": "nodes",
		"persistentvolumeclaim": "persistentvolumeclaims", "pvc": "persistentvolumeclaims",
		"persistentvolume": "persistentvolumes", "pv": "persistentvolumes",
		"serviceaccount": "serviceaccounts", "sa": "serviceaccounts",
		"endpoints": "endpoints", "ep": "endpoints",
		"event": "events", "ev": "events",
	},
	"apps": {
		"deployment": "deployments", "deploy": "deployments",
		"statefulset": "statefulsets", "sts": "statefulsets",
		"daemonset": "daemonsets", "ds": "daemonsets",
		"replicaset": "replicasets", "rs": "replicasets",
	},
	"batch": {
		"job":     "jobs",
		"cronjob": "cronjobs", "cj": "cronjobs",
	},
	"networking.k8s.io": {
		"ingress": "ingresses", "ing": "ingresses",
		"networkpolicy": "networkpolicies", "netpol": "networkpolicies",
	},
	"apiextensions.k8s.io": {
		"customresourcedefinition": "customresourcedefinitions", "crd": "customresourcedefinitions", "crds": "customresourcedefinitions",
	},
}

// Plural resolves a selector's name to the resource's plural offline, by
// this rule:
//
//  1. a known other name of a common built-in resource of the selector's
//     group (kind, singular or short name, any case) is that resource's
//     plural ("Pod", "pod", "po" in the core group are "pods");
//  2. a name in lower case is taken as the plural as given, which is what
//     the SDK's registration functions ask for ("kopfexamples");
//  3. a name with upper case is a kind: its plural is guessed by the
//     English rule Kubernetes applies to CRDs by default (lower case, then
//     "y" after a consonant becomes "ies", "s", "x", "z", "ch" and "sh" take
//     "es", anything else takes "s"), and a note says so.
//
// A lower-case singular or short name of a custom resource cannot be told
// from a plural offline; use the plural in the handler's registration.
func Plural(sel abi.ResourceSelector) (plural, note string) {
	lower := strings.ToLower(sel.Name)
	if p, ok := builtin[sel.Group][lower]; ok {
		return p, ""
	}
	if lower == sel.Name {
		return sel.Name, ""
	}
	p := guessPlural(lower)
	return p, fmt.Sprintf("%q looks like a kind: guessed the plural %q (name the plural in the handler to be sure)", sel.Name, p)
}

func guessPlural(s string) string {
	switch {
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}
