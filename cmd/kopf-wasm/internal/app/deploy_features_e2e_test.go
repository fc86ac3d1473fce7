package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// The checks of TestDeployE2E's host, run as deploy/'s ServiceAccount,
// feature by feature.

// managedWebhooks is the name of the webhook configurations the host
// manages, as deploy/base's Deployment names them.
const managedWebhooks = "kopf-wasm.dev"

var (
	clusterPeerings = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "clusterkopfpeerings"}
	crds            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgets         = func(version string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "kopf.dev", Version: version, Resource: "widgets"}
	}
)

// checkLeaderAndPeering waits for the leader election Lease "default" in
// ns held by the host, and for its keep-alive on the ClusterKopfPeering
// "default" (run -A -P default).
func checkLeaderAndPeering(t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface, ns string) {
	t.Helper()
	e2etest.Eventually(t, 60*time.Second, "the leader election Lease held", func() error {
		l, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), "default", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("Lease %s/default has no holder", ns)
		}
		return nil
	})
	e2etest.Eventually(t, 60*time.Second, "a keep-alive on the ClusterKopfPeering", func() error {
		p, err := dyn.Resource(clusterPeerings).Get(t.Context(), "default", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if status, _, _ := unstructured.NestedMap(p.Object, "status"); len(status) == 0 {
			return fmt.Errorf("ClusterKopfPeering default has no keep-alive: %v", p.Object)
		}
		return nil
	})
}

// checkWebhooks waits for the managed webhook configurations and checks
// that the API server calls the host through them: a forbidden object is
// denied, an admitted one labelled by the mutating handler.
func checkWebhooks(t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface, alive func() error) {
	t.Helper()
	e2etest.Eventually(t, 60*time.Second, "the managed webhook configurations", func() error {
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		v, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), managedWebhooks, metav1.GetOptions{})
		if err != nil {
			return err
		}
		m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), managedWebhooks, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(v.Webhooks) == 0 || len(m.Webhooks) == 0 {
			return fmt.Errorf("%d validating and %d mutating webhooks", len(v.Webhooks), len(m.Webhooks))
		}
		return nil
	})
	kex := dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace("default")
	example := func(name, field string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"field": field}}}
	}
	// The API server takes a moment to use a new configuration.
	e2etest.Eventually(t, 60*time.Second, "a forbidden object denied by the validating webhook", func() error {
		_, err := kex.Create(t.Context(), example("forbidden", "forbidden"), metav1.CreateOptions{})
		if err == nil {
			_ = kex.Delete(context.Background(), "forbidden", metav1.DeleteOptions{})
			return fmt.Errorf("admitted")
		}
		if !strings.Contains(err.Error(), "must not be 'forbidden'") {
			return err
		}
		return nil
	})
	e2etest.Eventually(t, 30*time.Second, "an object labelled by the mutating webhook", func() error {
		got, err := kex.Create(t.Context(), example("admitted", "value"), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = kex.Get(t.Context(), "admitted", metav1.GetOptions{})
		}
		if err != nil {
			return err
		}
		if by := got.GetLabels()["admitted-by"]; by != "kopf-wasm" {
			_ = kex.Delete(context.Background(), "admitted", metav1.DeleteOptions{})
			return fmt.Errorf("labels %v", got.GetLabels())
		}
		return nil
	})
}

// checkConversion waits for the Widget CRD's conversion to be the host's
// and for a widget written as v1alpha1 to be read as v1 through it.
func checkConversion(t *testing.T, dyn dynamic.Interface, alive func() error) {
	t.Helper()
	e2etest.Eventually(t, 60*time.Second, "the CRD's conversion set by the host", func() error {
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		crd, err := dyn.Resource(crds).Get(t.Context(), "widgets.kopf.dev", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); s != "Webhook" {
			return fmt.Errorf("conversion strategy %q", s)
		}
		return nil
	})
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "converted"}, "spec": map[string]any{"size": "3"}}}
	e2etest.Eventually(t, 60*time.Second, "a v1alpha1 widget read as v1", func() error {
		if _, err := dyn.Resource(widgets("v1alpha1")).Namespace("default").Create(t.Context(), w, metav1.CreateOptions{}); err != nil &&
			!apierrors.IsAlreadyExists(err) {
			return err
		}
		got, err := dyn.Resource(widgets("v1")).Namespace("default").Get(t.Context(), "converted", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if r, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas"); fmt.Sprint(r) != "3" {
			return fmt.Errorf("spec.replicas %v, want 3", r)
		}
		return nil
	})
}

// runSharded runs the host again, as the ServiceAccount of kubeconfig,
// with --shards and its membership Leases in ns (the sharded overlay's
// Role): its Lease appears, held, and an object is handled.
func runSharded(t *testing.T, cs kubernetes.Interface, kex dynamic.ResourceInterface, kubeconfig, ns, mod string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr e2etest.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &e2etest.LogBuffer{}, Err: &stderr},
			[]string{"run", "--kubeconfig", kubeconfig, "-A", "--standalone", "--shards", "--shard-namespace", ns, "--log-format", "json", mod})
	}()
	alive := func() {
		select {
		case code := <-done:
			t.Fatalf("run --shards exited with %d; stderr:\n%s", code, stderr.String())
		default:
		}
	}
	e2etest.Eventually(t, 60*time.Second, "a membership Lease held", func() error {
		alive()
		leases, err := cs.CoordinationV1().Leases(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, l := range leases.Items {
			if l.Name != "default" && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
				return nil
			}
		}
		return fmt.Errorf("no membership Lease in %s (%d Leases)", ns, len(leases.Items))
	})
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "sharded"}, "spec": map[string]any{"field": "value"}}}
	if _, err := kex.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 90*time.Second, "the object handled by the sharded host", func() error {
		alive()
		got, err := kex.Get(t.Context(), "sharded", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if msg, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "message"); msg != "hello world" {
			return fmt.Errorf("status.create_fn.message %q", msg)
		}
		return nil
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run --shards exited with %d; stderr:\n%s", code, stderr.String())
	}
	if refused := refusals(stderr.String()); len(refused) > 0 {
		t.Errorf("the sharded host was refused something:\n%s", strings.Join(refused, "\n"))
	}
}

// refusals are the log lines that say "forbidden", but the admission
// example's denials of spec.field "forbidden".
func refusals(logs string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") && !strings.Contains(line, "must not be 'forbidden'") {
			out = append(out, line)
		}
	}
	return out
}
