package examplestest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

var (
	validatingConfigs = gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")
	mutatingConfigs   = gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
)

// warnings records the API server's warnings (the Warning headers kubectl
// prints).
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// webhookCount is a condition: the managed configuration of kind has n
// webhooks.
func webhookCount(res, name string, n int) func() error {
	return func() error {
		obj, err := dyn.Resource(gvr("admissionregistration.k8s.io", "v1", res)).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		if len(hooks) != n {
			return fmt.Errorf("%s %s has %d webhooks, want %d", res, name, len(hooks), n)
		}
		return nil
	}
}

// TestAdmission: the host serves the example's webhooks to the real API
// server through managed configurations: a denial with the handler's
// message and code, a mutation on the stored object, warnings, a dry run,
// looping validators answered by their failure policy within the
// webhook's timeout, and the configurations emptied on a clean stop.
func TestAdmission(t *testing.T) {
	const ns, managed = "ex-admission", "e2e.kopf-wasm.dev"
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Cleanup(func() {
		// Whatever happens, leave no webhook behind for the other tests.
		_ = dyn.Resource(validatingConfigs).Delete(context.Background(), managed, metav1.DeleteOptions{})
		_ = dyn.Resource(mutatingConfigs).Delete(context.Background(), managed, metav1.DeleteOptions{})
	})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	s := settings.Default()
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", managed
	s.Admission.TimeoutSeconds = 3
	logs := &e2etest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- host.Run(ctx, host.Options{
			Modules: []string{wasmtest.Path(t, "09-admission")}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns},
			Settings: &s, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		})
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the operator did not stop within 30s")
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("operator logs:\n%s", logs.String())
		}
	})
	e2etest.Eventually(t, 60*time.Second, "managed configurations", func() error {
		if err := webhookCount("validatingwebhookconfigurations", managed, 3)(); err != nil {
			return err
		}
		return webhookCount("mutatingwebhookconfigurations", managed, 1)()
	})

	rec := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = rec
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kexs := client.Resource(kopfexamples).Namespace(ns)
	create := func(obj map[string]any, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
		return kexs.Create(context.Background(), &unstructured.Unstructured{Object: obj}, opts)
	}

	// The API server takes a moment to see a new configuration: wait for the
	// denial.
	var denial error
	e2etest.Eventually(t, 30*time.Second, "the denial", func() error {
		_, denial = create(kex("bad", nil, map[string]any{"field": "forbidden"}), metav1.CreateOptions{})
		if denial == nil {
			_ = kexs.Delete(context.Background(), "bad", metav1.DeleteOptions{})
			return fmt.Errorf("the object was admitted")
		}
		return nil
	})
	var status apierrors.APIStatus
	if !strings.Contains(denial.Error(), "spec.field must not be 'forbidden'") || !asStatus(denial, &status) || status.Status().Code != 422 {
		t.Errorf("denial: %v", denial)
	}

	// kubectl apply shows the handler's message, and its warnings.
	kubectl := func(stdin string) (string, error) {
		cmd := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "apply", "-n", ns, "-f", "-")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Errorf("kubectl is not on PATH: %v", err)
	} else {
		out, err := kubectl("apiVersion: kopf.dev/v1\nkind: KopfExample\nmetadata: {name: by-kubectl}\nspec: {field: forbidden}\n")
		if err == nil || !strings.Contains(out, "spec.field must not be 'forbidden'") {
			t.Errorf("kubectl apply of a forbidden object: %v: %s", err, out)
		}
		out, err = kubectl("apiVersion: kopf.dev/v1\nkind: KopfExample\nmetadata: {name: by-kubectl}\nspec: {field: \"\"}\n")
		if err != nil || !strings.Contains(out, "Warning: spec.field is empty") {
			t.Errorf("kubectl apply with a warning: %v: %s", err, out)
		}
	}

	// A mutation, visible on the stored object, and a warning.
	rec.take()
	if _, err := create(kex("good", nil, map[string]any{"field": ""}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored := get(t, kopfexamples, ns, "good")
	if l := stored.GetLabels(); l["admitted-by"] != "kopf-wasm" || l["admitted-on"] != "CREATE" {
		t.Errorf("stored labels %v", l)
	}
	if w := rec.take(); !contains(w, "spec.field is empty") {
		t.Errorf("warnings %q", w)
	}
	mergePatch(t, kopfexamples, ns, "good", `{"spec":{"field":"changed"}}`)
	if l := get(t, kopfexamples, ns, "good").GetLabels(); l["admitted-on"] != "UPDATE" {
		t.Errorf("labels after an update %v", l)
	}

	// A dry run: the handler sees it, the mutation is in the answer, nothing
	// is stored.
	dry, err := create(kex("dry", nil, map[string]any{"field": "x"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if dry.GetLabels()["admitted-by"] != "kopf-wasm" {
		t.Errorf("dry-run answer labels %v", dry.GetLabels())
	}
	if w := rec.take(); !contains(w, "dry run: checked, nothing is stored") {
		t.Errorf("dry-run warnings %q", w)
	}
	if get(t, kopfexamples, ns, "dry") != nil {
		t.Error("the dry run stored the object")
	}

	// Looping validators: answered within the 3 s timeout, by their
	// failure policy.
	start := time.Now()
	_, err = create(kex("loops", map[string]any{"loop": "fail"}, nil), metav1.CreateOptions{})
	took := time.Since(start)
	t.Logf("the looping validator was answered after %s: %v", took, err)
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("a looping validator with failure policy Fail: %v", err)
	}
	if took > 3*time.Second {
		t.Errorf("the looping validator was answered after %s, past the 3 s timeout", took)
	}
	start = time.Now()
	if _, err := create(kex("loops-ignored", map[string]any{"loop": "ignore"}, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("a looping validator with failure policy Ignore: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the ignored looping validator was answered after %s", took)
	}
	if w := rec.take(); !contains(w, "did not answer in time") {
		t.Errorf("warnings of the ignored failure %q", w)
	}

	// A clean stop empties the managed configurations (no handler is
	// persistent), so a stopped host blocks nothing.
	stop()
	if err := webhookCount("validatingwebhookconfigurations", managed, 0)(); err != nil {
		t.Error(err)
	}
	if err := webhookCount("mutatingwebhookconfigurations", managed, 0)(); err != nil {
		t.Error(err)
	}
}

// TestAdmissionFollowsSwaps: the managed configurations follow the module
// file as it is swapped: a version without webhook handlers empties them
// (the server keeps running), the webhook version fills them again.
func TestAdmissionFollowsSwaps(t *testing.T) {
	const ns, managed = "ex-admission-swap", "swap.kopf-wasm.dev"
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Cleanup(func() {
		_ = dyn.Resource(validatingConfigs).Delete(context.Background(), managed, metav1.DeleteOptions{})
		_ = dyn.Resource(mutatingConfigs).Delete(context.Background(), managed, metav1.DeleteOptions{})
	})
	webhooks, err := os.ReadFile(wasmtest.Path(t, "09-admission"))
	if err != nil {
		t.Fatal(err)
	}
	timers, err := os.ReadFile(wasmtest.Path(t, "07-timers"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "handlers.wasm")
	put := func(wasm []byte) {
		t.Helper()
		tmp := filepath.Join(dir, "next.tmp")
		if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	put(webhooks)
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	s := settings.Default()
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", managed
	s.Modules.ReloadInterval = 200 * time.Millisecond
	runHost(t, host.Options{Modules: []string{file}, Kubeconfig: env.Kubeconfig, Namespaces: []string{ns}, Settings: &s})
	counts := func(v, m int) func() error {
		return func() error {
			if err := webhookCount("validatingwebhookconfigurations", managed, v)(); err != nil {
				return err
			}
			return webhookCount("mutatingwebhookconfigurations", managed, m)()
		}
	}
	e2etest.Eventually(t, 60*time.Second, "the webhooks of the first version", counts(3, 1))
	put(timers)
	e2etest.Eventually(t, 60*time.Second, "no webhooks after the swap", counts(0, 0))
	put(webhooks)
	e2etest.Eventually(t, 60*time.Second, "the webhooks back after the second swap", counts(3, 1))
}

func asStatus(err error, into *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*into = s
	}
	return ok
}

func contains(list []string, part string) bool {
	for _, s := range list {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}
