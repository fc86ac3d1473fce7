package kube

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Resource is a resource the cluster serves, as discovery describes it.
type Resource struct {
	abi.ResourceRef
	// Singular and ShortNames are the other names of the resource.
	Singular   string
	ShortNames []string
	// Status says the resource has a status subresource, which must be
	// patched separately from the main object.
	Status bool
	// Verbs the resource supports (get, list, watch, patch, ...).
	Verbs []string
	// Categories the resource is in; Preferred says its version is its
	// group's preferred one (for callable selectors; set by
	// [Client.ResolveAll] for selectors of many resources).
	Categories []string
	Preferred  bool
}

// GVR returns the group, version and plural of the resource.
func (r Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Plural}
}

// String names the resource as Kopf does: "kopfexamples.v1.kopf.dev", or
// "pods.v1" in the core group.
func (r Resource) String() string { return gvrString(r.GVR()) }

func gvrString(gvr schema.GroupVersionResource) string {
	s := gvr.Resource + "." + gvr.Version
	if gvr.Group != "" {
		s += "." + gvr.Group
	}
	return s
}

// discovered is a snapshot of the cluster's discovery documents.
type discovered struct {
	groups []*metav1.APIGroup
	lists  []*metav1.APIResourceList
}

// preferred maps each group to its preferred version.
func (d discovered) preferred() map[string]string {
	m := make(map[string]string, len(d.groups))
	for _, g := range d.groups {
		m[g.Name] = g.PreferredVersion.Version
	}
	return m
}

// each calls fn with every resource of every listed group/version (not
// subresources), and whether the resource has a status subresource.
func (d discovered) each(fn func(gv schema.GroupVersion, r metav1.APIResource, status bool)) {
	for _, list := range d.lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		status := map[string]bool{}
		for _, r := range list.APIResources {
			if main, sub, ok := strings.Cut(r.Name, "/"); ok && sub == "status" {
				status[main] = true
			}
		}
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") {
				fn(gv, r, status[r.Name])
			}
		}
	}
}

// lookup finds a resource by group, version and plural.
func (d discovered) lookup(gvr schema.GroupVersionResource) (Resource, bool) {
	var found Resource
	var ok bool
	d.each(func(gv schema.GroupVersion, r metav1.APIResource, status bool) {
		if !ok && gv.Group == gvr.Group && gv.Version == gvr.Version && r.Name == gvr.Resource {
			found, ok = newResource(gv, r, status), true
		}
	})
	return found, ok
}

func newResource(gv schema.GroupVersion, r metav1.APIResource, status bool) Resource {
	return Resource{
		ResourceRef: abi.ResourceRef{
			Group: gv.Group, Version: gv.Version, Plural: r.Name,
			Kind: r.Kind, Namespaced: r.Namespaced,
		},
		Singular:   r.SingularName,
		ShortNames: slices.Clone(r.ShortNames),
		Status:     status,
		Verbs:      slices.Clone(r.Verbs),
		Categories: slices.Clone(r.Categories),
	}
}

// resolve finds the one resource a selector names, with Kopf's rules: the
// name is a plural, singular, kind or short name; an empty group means any
// group, but the core group wins when it has a match; an empty version
// means the group's preferred version; matches in several groups are
// ambiguous.
func (d discovered) resolve(sel abi.ResourceSelector) (Resource, error) {
	sel = splitDottedName(sel)
	preferred := d.preferred()
	var found, elsewhere []Resource
	d.each(func(gv schema.GroupVersion, r metav1.APIResource, status bool) {
		if (sel.Group != "" && gv.Group != sel.Group) || !nameMatches(r, sel.Name) {
			return
		}
		switch {
		case sel.Version != "" && gv.Version != sel.Version:
		case sel.Version == "" && preferred[gv.Group] != "" && gv.Version != preferred[gv.Group]:
			elsewhere = append(elsewhere, newResource(gv, r, status))
		default:
			found = append(found, newResource(gv, r, status))
		}
	})
	if len(found) == 0 {
		return Resource{}, notServed(sel, elsewhere)
	}
	if core := coreOnly(found); len(core) > 0 {
		found = core
	}
	if len(found) > 1 {
		names := make([]string, len(found))
		for i, r := range found {
			names[i] = r.String()
		}
		sort.Strings(names)
		return Resource{}, fmt.Errorf("resource %s: %w: it matches %s; name the group",
			selString(sel), ErrAmbiguous, strings.Join(names, ", "))
	}
	return found[0], nil
}

func nameMatches(r metav1.APIResource, name string) bool {
	return name == r.Name || name == r.SingularName || name == r.Kind ||
		slices.Contains(r.ShortNames, name) ||
		(r.SingularName == "" && name == strings.ToLower(r.Kind))
}

func coreOnly(rs []Resource) []Resource {
	var core []Resource
	for _, r := range rs {
		if r.Group == "" {
			core = append(core, r)
		}
	}
	return core
}

func notServed(sel abi.ResourceSelector, elsewhere []Resource) error {
	if len(elsewhere) > 0 {
		names := make([]string, len(elsewhere))
		for i, r := range elsewhere {
			names[i] = r.String()
		}
		sort.Strings(names)
		return fmt.Errorf("resource %s: %w in a preferred version (the cluster has %s; name the version)",
			selString(sel), ErrNotServed, strings.Join(names, ", "))
	}
	return fmt.Errorf("resource %s: %w by the cluster", selString(sel), ErrNotServed)
}

func selString(sel abi.ResourceSelector) string {
	parts := []string{sel.Name}
	if sel.Version != "" {
		parts = append(parts, sel.Version)
	}
	if sel.Group != "" {
		parts = append(parts, sel.Group)
	}
	return strings.Join(parts, ".")
}

var versionRE = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// splitDottedName reads Kopf's one-string forms when no group or version is
// given: "kopfexamples.kopf.dev", "pods.v1", "pods.v1beta1.metrics.k8s.io".
func splitDottedName(sel abi.ResourceSelector) abi.ResourceSelector {
	if sel.Group != "" || sel.Version != "" {
		return sel
	}
	name, rest, ok := strings.Cut(sel.Name, ".")
	if !ok {
		return sel
	}
	sel.Name = name
	first, after, _ := strings.Cut(rest, ".")
	if versionRE.MatchString(first) {
		sel.Version, sel.Group = first, after
	} else {
		sel.Group = rest
	}
	return sel
}
