package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The discovery documents are fetched with the client's own REST client
// rather than client-go's discovery package: that package registers every
// built-in API type of Kubernetes in client-go's scheme at start-up, which
// made the host's binary 20 MB larger and its resident memory ~10 MB
// larger, for two requests the host decodes itself.

// aggregatedAccept asks for aggregated discovery (one document for all
// groups, Kubernetes 1.30 and later), else the plain documents.
const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// discover fetches the groups and the resource lists of every group version
// the server serves. A group whose document cannot be fetched (an
// aggregated API that is down) is left out, as client-go's discovery does;
// only a failure of the root documents is an error.
func discover(ctx context.Context, rc rest.Interface) (*discovered, error) {
	snap := &discovered{}
	for _, root := range []string{"/api", "/apis"} {
		body, aggregated, err := getDiscovery(ctx, rc, root, aggregatedAccept)
		if err != nil {
			return nil, err
		}
		if aggregated {
			var list apidiscoveryv2.APIGroupDiscoveryList
			if err := json.Unmarshal(body, &list); err != nil {
				return nil, fmt.Errorf("decoding %s: %w", root, err)
			}
			snap.addAggregated(list, root == "/api")
			continue
		}
		if err := snap.addLegacy(ctx, rc, root, body); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// getDiscovery GETs a discovery document and says whether the server sent
// the aggregated form.
func getDiscovery(ctx context.Context, rc rest.Interface, path, accept string) ([]byte, bool, error) {
	res := rc.Get().AbsPath(path).SetHeader("Accept", accept).Do(ctx)
	body, err := res.Raw()
	if err != nil {
		return nil, false, err
	}
	var contentType string
	res.ContentType(&contentType)
	return body, strings.Contains(contentType, "as=APIGroupDiscoveryList"), nil
}

// addAggregated adds an aggregated discovery list; core says it is the
// legacy group's (/api), whose group name is "".
func (d *discovered) addAggregated(list apidiscoveryv2.APIGroupDiscoveryList, core bool) {
	for _, g := range list.Items {
		group := &metav1.APIGroup{Name: g.Name}
		if core {
			group.Name = ""
		}
		for _, v := range g.Versions {
			if v.Freshness == apidiscoveryv2.DiscoveryFreshnessStale {
				continue // its aggregated API did not answer: as a failed group
			}
			gv := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion(group.Name, v.Version), Version: v.Version}
			group.Versions = append(group.Versions, gv)
			d.lists = append(d.lists, resourceList(gv.GroupVersion, v.Resources))
		}
		if len(group.Versions) == 0 {
			continue
		}
		group.PreferredVersion = group.Versions[0] // listed in preference order
		d.groups = append(d.groups, group)
	}
}

// resourceList converts an aggregated group version's resources to the
// plain form, subresources as "plural/sub" entries.
func resourceList(groupVersion string, resources []apidiscoveryv2.APIResourceDiscovery) *metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: groupVersion}
	for _, r := range resources {
		res := metav1.APIResource{
			Name:         r.Resource,
			SingularName: r.SingularResource,
			Namespaced:   r.Scope == apidiscoveryv2.ScopeNamespace,
			Verbs:        r.Verbs,
			ShortNames:   r.ShortNames,
			Categories:   r.Categories,
		}
		if r.ResponseKind != nil {
			res.Kind = r.ResponseKind.Kind
		}
		list.APIResources = append(list.APIResources, res)
		for _, sub := range r.Subresources {
			subres := metav1.APIResource{Name: r.Resource + "/" + sub.Subresource, Namespaced: res.Namespaced, Verbs: sub.Verbs}
			if sub.ResponseKind != nil {
				subres.Kind = sub.ResponseKind.Kind
			}
			list.APIResources = append(list.APIResources, subres)
		}
	}
	return list
}

// addLegacy adds the plain documents under root, whose root document is
// body: /api lists versions of the core group, /apis the groups; each
// group version's resources are then fetched, concurrently.
func (d *discovered) addLegacy(ctx context.Context, rc rest.Interface, root string, body []byte) error {
	groups, err := legacyGroups(root, body)
	if err != nil {
		return err
	}
	type fetched struct {
		list *metav1.APIResourceList
		err  error
	}
	var wg sync.WaitGroup
	results := make([][]fetched, len(groups))
	for i, g := range groups {
		results[i] = make([]fetched, len(g.Versions))
		for j, v := range g.Versions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				raw, _, err := getDiscovery(ctx, rc, root+"/"+v.GroupVersion, "application/json")
				list := &metav1.APIResourceList{}
				if err == nil {
					err = json.Unmarshal(raw, list)
				}
				results[i][j] = fetched{list: list, err: err}
			}()
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// The groups did not fail: the caller gave up. A snapshot of the
		// ones that answered in time must not replace a complete one.
		return fmt.Errorf("discovery of the API groups: %w", err)
	}
	for i, g := range groups {
		kept := *g
		kept.Versions = nil
		for j, v := range g.Versions {
			if results[i][j].err != nil {
				continue // as a failed group: its resources are not found
			}
			kept.Versions = append(kept.Versions, v)
			d.lists = append(d.lists, results[i][j].list)
		}
		if len(kept.Versions) > 0 {
			d.groups = append(d.groups, &kept)
		}
	}
	return nil
}

// legacyGroups decodes a plain root document: APIVersions for /api (the
// core group), APIGroupList for /apis.
func legacyGroups(root string, body []byte) ([]*metav1.APIGroup, error) {
	if root == "/api" {
		var versions metav1.APIVersions
		if err := json.Unmarshal(body, &versions); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", root, err)
		}
		core := &metav1.APIGroup{}
		for _, v := range versions.Versions {
			core.Versions = append(core.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
		}
		if len(core.Versions) == 0 {
			return nil, nil
		}
		core.PreferredVersion = core.Versions[0]
		return []*metav1.APIGroup{core}, nil
	}
	var list metav1.APIGroupList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", root, err)
	}
	groups := make([]*metav1.APIGroup, len(list.Groups))
	for i := range list.Groups {
		groups[i] = &list.Groups[i]
	}
	return groups, nil
}

func groupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}
