package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// partialList is the part of a PartialObjectMetadataList that Versions
// reads.
type partialList struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Namespace       string `json:"namespace"`
			Name            string `json:"name"`
			UID             string `json:"uid"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"items"`
}

// ObjectVersion is an object's UID and current resourceVersion.
type ObjectVersion struct {
	UID, ResourceVersion string
}

// Versions reads from the API server (not the watch cache) the UID and
// current resourceVersion of every object of res in namespace ("" for all
// namespaces or a cluster-scoped resource), keyed by "namespace/name".
// It asks for metadata only, in pages of 500. The sharding hand-over uses
// it: a replica that takes objects over must not handle them on a cache
// that has not yet seen the previous owner's last writes.
func (c *Client) Versions(ctx context.Context, res Resource, namespace string) (map[string]ObjectVersion, error) {
	out := map[string]ObjectVersion{}
	info := reqInfo{verb: "list", resource: res.String(), namespace: namespace}
	next := ""
	for {
		var body []byte
		err := wrapAPI(info, c.retry.do(ctx, func(err error) error { return wrapAPI(info, err) }, func(ctx context.Context) error {
			req := c.raw.Get().AbsPath(objectPath(res.GVR(), namespace, "", "")...).
				SetHeader("Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json").
				Param("limit", strconv.Itoa(500))
			if next != "" {
				req = req.Param("continue", next)
			}
			var err error
			body, err = req.Do(ctx).Raw()
			return err
		}))
		if err != nil {
			return nil, fmt.Errorf("kube: %w", err)
		}
		var page partialList
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("kube: listing %s: %w", res, err)
		}
		for _, it := range page.Items {
			out[it.Metadata.Namespace+"/"+it.Metadata.Name] = ObjectVersion{UID: it.Metadata.UID, ResourceVersion: it.Metadata.ResourceVersion}
		}
		if next = page.Metadata.Continue; next == "" {
			return out, nil
		}
	}
}
