package examplestest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// BenchmarkWebhookThroughAPIServer measures what one validating webhook
// served by the host adds to a create through the API server: creates of a
// KopfExample one after the other, without webhooks, then with the
// trivial validator of testguests/admissionbench configured (its mutator
// is scoped by its objectSelector to other objects).
//
//	go test -run '^$' -bench WebhookThroughAPIServer -benchtime 300x ./internal/examplestest/
//
// On the 2-core development VM (2026-11-24, shared with other builds): p50
// 2.9 ms without a webhook and 6.3 ms with it (300 creates), 3.7 and 8.6
// ms (500 creates): the webhook adds 3.3-4.9 ms at the median. The API
// server keeps one connection to the host for all the calls; how the added
// time splits between the API server and the host was not measured.
func BenchmarkWebhookThroughAPIServer(b *testing.B) {
	const ns, managed = "bench-webhook", "bench.kopf-wasm.dev"
	bg := context.Background()
	if _, err := dyn.Resource(gvr("", "v1", "namespaces")).Create(bg, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		b.Logf("namespace: %v", err)
	}
	defer func() {
		_ = dyn.Resource(validatingConfigs).Delete(bg, managed, metav1.DeleteOptions{})
		_ = dyn.Resource(mutatingConfigs).Delete(bg, managed, metav1.DeleteOptions{})
	}()
	n := 0
	creates := func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			n++
			obj := &unstructured.Unstructured{Object: kex(fmt.Sprintf("w-%d", n), nil, map[string]any{"field": "x"})}
			start := time.Now()
			if _, err := dyn.Resource(kopfexamples).Namespace(ns).Create(bg, obj, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("no-webhook", creates)

	b.Setenv("KOPF_WASM_CACHE", b.TempDir())
	s := settings.Default()
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", managed
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		done <- host.Run(ctx, host.Options{
			Modules: []string{wasmtest.Path(b, "testguests/admissionbench")}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns},
			Settings: &s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	}()
	defer func() {
		cancel()
		<-done
	}()
	// Active once the API server calls the mutator for a labelled object.
	e2etest.Eventually(b, 60*time.Second, "the webhooks in use", func() error {
		n++
		obj := &unstructured.Unstructured{Object: kex(fmt.Sprintf("w-%d", n), map[string]any{"bench-mutate": "yes"}, nil)}
		got, err := dyn.Resource(kopfexamples).Namespace(ns).Create(bg, obj, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if got.GetLabels()["mutated"] != "yes" {
			return fmt.Errorf("not mutated yet")
		}
		return nil
	})
	b.Run("one-validating-webhook", creates)
}
