package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Scanning: Kopf's cluster discovery at run time. Selectors may name many
// resources (a category, everything), and the resources a selector names
// change as CustomResourceDefinitions come and go; the reactor watches the
// CRDs ([Client.WatchCRDs]), refreshes discovery
// ([Client.RefreshDiscovery]) and resolves its selectors again
// ([Client.ResolveAll]).

// crdsGVR is the resource of CustomResourceDefinitions.
var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ResolveAll finds every resource a selector names: the one of
// [Client.Resolve] for a named resource; for a category or everything
// (abi.ResourceSelector.Many) each resource in that category, or every
// resource, of the selector's group and version when set, in its
// preferred version unless the version is set (a callable selector's
// candidates: every version), that can be listed and watched, never core
// or events.k8s.io Events (Kopf's rules). They are
// sorted by name. An error wraps [ErrNotServed] when none matches (after
// one refresh of discovery, as Resolve).
func (c *Client) ResolveAll(ctx context.Context, sel abi.ResourceSelector) ([]Resource, error) {
	if !sel.Many() {
		res, err := c.Resolve(ctx, sel)
		if err != nil {
			return nil, err
		}
		return []Resource{res}, nil
	}
	var out []Resource
	err := c.disc.find(ctx, func(snap discovered) error {
		out = snap.resolveMany(sel)
		if len(out) == 0 {
			return fmt.Errorf("%s: %w by the cluster (yet)", manyString(sel), ErrNotServed)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	return out, nil
}

// resolveMany lists the resources of a category or everything selector.
func (d discovered) resolveMany(sel abi.ResourceSelector) []Resource {
	preferred := d.preferred()
	var out []Resource
	d.each(func(gv schema.GroupVersion, r metav1.APIResource, status bool) {
		switch {
		case sel.Group != "" && gv.Group != sel.Group:
		case sel.Version != "" && gv.Version != sel.Version:
		case sel.Version == "" && !sel.Callback && preferred[gv.Group] != "" && gv.Version != preferred[gv.Group]:
		case sel.Category != "" && !slices.Contains(r.Categories, sel.Category):
		case isEvents(gv.Group, r.Name):
		case !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch"):
		default:
			res := newResource(gv, r, status)
			res.Preferred = preferred[gv.Group] == "" || gv.Version == preferred[gv.Group]
			out = append(out, res)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// isEvents reports whether a resource is Kubernetes' Events, which Kopf
// never serves to broad selectors (handling them would post more).
func isEvents(group, plural string) bool {
	return plural == "events" && (group == "" || group == "events.k8s.io")
}

func manyString(sel abi.ResourceSelector) string {
	s := "every resource"
	if sel.Callback {
		s = "every resource a callable selector chooses from"
	}
	if sel.Category != "" {
		s = fmt.Sprintf("the resources in category %q", sel.Category)
	}
	if sel.Group != "" || sel.Version != "" {
		s += fmt.Sprintf(" of %s", groupVersion(sel.Group, sel.Version))
	}
	return s
}

// RefreshDiscovery fetches the discovery documents again now, whatever
// settings.Kube.DiscoveryRefresh says: a CRD changed. On failure the last
// snapshot stays in use.
func (c *Client) RefreshDiscovery(ctx context.Context) error {
	c.disc.mu.Lock()
	c.disc.fetched = c.disc.fetched.Add(-c.disc.minRefresh)
	c.disc.mu.Unlock()
	if _, _, err := c.disc.get(ctx, true); err != nil {
		return fmt.Errorf("kube: %w", err)
	}
	return nil
}

// WatchCRDs calls changed after every change of a
// CustomResourceDefinition (one created, its status changed, one deleted),
// not for those that existed when the watch started. The error wraps
// [ErrForbidden] when the host may not list CustomResourceDefinitions: the
// caller then serves what it found at the start (Kopf does the same).
func (c *Client) WatchCRDs(ctx context.Context, changed func()) (*Watch, error) {
	rctx, cancel := context.WithTimeout(ctx, c.kube.RequestTimeout)
	_, err := c.dyn.Resource(crdsGVR).List(rctx, metav1.ListOptions{Limit: 1})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("kube: %w", wrapAPI(reqInfo{verb: "list", resource: gvrString(crdsGVR)}, err))
	}
	res, err := c.Lookup(ctx, crdsGVR)
	if err != nil {
		return nil, err
	}
	return c.Watch(ctx, res, AllNamespaces(), func(ev Event) {
		if !ev.Initial {
			changed()
		}
	})
}
