package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// discoveryServer serves discovery documents by path; a path missing from
// docs answers 503, as an aggregated API that is down does. With
// aggregated set, /api and /apis answer in the aggregated form.
func discoveryServer(t *testing.T, docs map[string]string, aggregated bool) rest.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":503}`, http.StatusServiceUnavailable)
			return
		}
		contentType := "application/json"
		root := r.URL.Path == "/api" || r.URL.Path == "/apis"
		if aggregated && root && strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList") {
			contentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(doc))
	}))
	t.Cleanup(srv.Close)
	rc, err := rawClient(&rest.Config{Host: srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// resourcesOf lists a snapshot's resources as "name.gv ns status kind".
func resourcesOf(d *discovered) []string {
	var out []string
	d.each(func(gv schema.GroupVersion, r metav1.APIResource, status bool) {
		out = append(out, strings.Join([]string{r.Name + "." + gv.String(), boolWord(r.Namespaced, "ns"), boolWord(status, "status"), r.Kind}, " "))
	})
	slices.Sort(out)
	return out
}

func boolWord(b bool, word string) string {
	if b {
		return word
	}
	return "-"
}

func TestDiscover(t *testing.T) {
	legacy := map[string]string{
		"/api":          `{"kind":"APIVersions","versions":["v1"]}`,
		"/api/v1":       `{"groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get"],"shortNames":["po"]},{"name":"pods/status","namespaced":true,"kind":"Pod","verbs":["get"]},{"name":"namespaces","namespaced":false,"kind":"Namespace","verbs":["get"]}]}`,
		"/apis":         `{"kind":"APIGroupList","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},{"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}}]}`,
		"/apis/apps/v1": `{"groupVersion":"apps/v1","resources":[{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"]}]}`,
	}
	aggregated := map[string]string{
		"/api": `{"kind":"APIGroupDiscoveryList","items":[{"metadata":{},"versions":[{"version":"v1","resources":[
			{"resource":"pods","singularResource":"pod","scope":"Namespaced","responseKind":{"kind":"Pod"},"verbs":["get"],"shortNames":["po"],"subresources":[{"subresource":"status","responseKind":{"kind":"Pod"},"verbs":["get"]}]},
			{"resource":"namespaces","singularResource":"namespace","scope":"Cluster","responseKind":{"kind":"Namespace"},"verbs":["get"]}]}]}]}`,
		"/apis": `{"kind":"APIGroupDiscoveryList","items":[
			{"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[{"resource":"deployments","singularResource":"deployment","scope":"Namespaced","responseKind":{"kind":"Deployment"},"verbs":["get"]}]}]},
			{"metadata":{"name":"metrics.k8s.io"},"versions":[{"version":"v1beta1","freshness":"Stale","resources":[{"resource":"pods","scope":"Namespaced","responseKind":{"kind":"PodMetrics"},"verbs":["get"]}]}]}]}`,
	}
	// The metrics group is down in both: the legacy document answers 503,
	// the aggregated one says Stale. Its resources are left out.
	want := []string{
		"deployments.apps/v1 ns - Deployment",
		"namespaces.v1 - - Namespace",
		"pods.v1 ns status Pod",
	}
	for name, tt := range map[string]struct {
		docs       map[string]string
		aggregated bool
	}{"legacy": {legacy, false}, "aggregated": {aggregated, true}} {
		t.Run(name, func(t *testing.T) {
			snap, err := discover(t.Context(), discoveryServer(t, tt.docs, tt.aggregated))
			if err != nil {
				t.Fatal(err)
			}
			if got := resourcesOf(snap); !slices.Equal(got, want) {
				t.Errorf("resources = %q; want %q", got, want)
			}
			preferred := snap.preferred()
			if len(preferred) != 2 || preferred[""] != "v1" || preferred["apps"] != "v1" {
				t.Errorf("preferred versions = %v; want the core and apps groups at v1", preferred)
			}
			res, err := snap.resolve(abi.ResourceSelector{Name: "po"})
			if err != nil || res.Singular != "pod" || !res.Status {
				t.Errorf("resolve(po) = %+v, %v; want pods with singular pod and status", res, err)
			}
		})
	}
}

func TestDiscoverRootFails(t *testing.T) {
	_, err := discover(t.Context(), discoveryServer(t, map[string]string{"/api": `{"versions":["v1"]}`, "/api/v1": `{"groupVersion":"v1"}`}, false))
	if err == nil {
		t.Fatal("discover with /apis answering 503: no error")
	}
	_, err = discover(t.Context(), discoveryServer(t, map[string]string{"/api": `{"versions":`}, false))
	if err == nil || !strings.Contains(err.Error(), "decoding /api") {
		t.Fatalf("discover with a malformed /api = %v; want a decoding error naming /api", err)
	}
}

// TestDiscoverCancelled: a discovery given up while group documents are
// still on their way fails with the context's error instead of returning
// the groups that answered in time as if the others were down.
func TestDiscoverCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api":
			_, _ = w.Write([]byte(`{"versions":[]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"groups":[{"name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"}]}]}`))
		default: // the last fetch: its group document never arrives in time
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	rc, err := rawClient(&rest.Config{Host: srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := discover(ctx, rc); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("discover past its deadline = %v; want context.DeadlineExceeded", err)
	}
}
