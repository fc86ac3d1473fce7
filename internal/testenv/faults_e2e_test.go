package testenv_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// TestAPIServerRestartAndCompaction stops and starts kube-apiserver on the
// same etcd: it stops promptly although a watch is open, requests are
// refused while it is down, the rest config and the
// kubeconfig work again afterwards and the objects are still there. Then a
// compaction of etcd makes a watch from an older resourceVersion fail with
// 410 Gone (the watch cache is off, so the watch reaches etcd).
func TestAPIServerRestartAndCompaction(t *testing.T) {
	env := testenv.Start(t, testenv.Options{APIServerFlags: map[string]string{"watch-cache": "false"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A watch open while it stops, as clients have.
	open, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Stop()
	stopping := time.Now()
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopTime := time.Since(stopping)
	t.Logf("kube-apiserver stopped in %s", stopTime.Round(time.Millisecond))
	if stopTime > 30*time.Second {
		t.Errorf("kube-apiserver took %s to stop with a watch open (it should end watches within 2 s)", stopTime)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "before", metav1.GetOptions{}); err == nil {
		t.Fatal("GET succeeded while the API server was stopped")
	}
	begin := time.Now()
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver started again in %s", time.Since(begin).Round(time.Millisecond))
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "before", metav1.GetOptions{}); err != nil {
		t.Fatalf("GET through the old rest config after the restart: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Get(ctx, "before", metav1.GetOptions{}); err != nil {
		t.Fatalf("GET through the kubeconfig after the restart: %v", err)
	}

	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rev, err := env.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d", rev)
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
	if err == nil {
		// The API server may answer the watch and then send the error.
		ev, ok := <-w.ResultChan()
		w.Stop()
		if !ok {
			t.Fatal("the watch from a compacted resourceVersion ended without an event")
		}
		err = apierrors.FromObject(ev.Object)
	}
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from the compacted resourceVersion %s: %v, want 410 Gone", cm.ResourceVersion, err)
	}
}
