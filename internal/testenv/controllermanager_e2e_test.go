package testenv_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// TestControllerManagerE2E starts the control plane with
// kube-controller-manager and its default controllers, and watches them
// work: the garbage collector deletes dependents of deleted owners, a
// deleted namespace is emptied and removed (a PVC in it too, which needs
// pvc-protection), and service-account tokens are minted with a key the
// API server accepts.
func TestControllerManagerE2E(t *testing.T) {
	out := &e2etest.LogBuffer{}
	begin := time.Now()
	env := testenv.Start(t, testenv.Options{ControllerManager: true, Output: out})
	t.Logf("control plane with kube-controller-manager up in %v", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the control plane's output, last 80 lines:\n%s", lastLines(out.String(), 80))
		}
	})
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("garbage collection", func(t *testing.T) {
		ns := namespace(t, cs, "gc")
		cms := cs.CoreV1().ConfigMaps(ns)
		a := create(t, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner-a"}})
		b := create(t, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner-b"}})
		refA, refB := ownerRef(a), ownerRef(b)
		create(t, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-a", OwnerReferences: []metav1.OwnerReference{refA}}})
		create(t, cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-and-b", OwnerReferences: []metav1.OwnerReference{refA, refB}}})

		begin := time.Now()
		if err := cms.Delete(context.Background(), "owner-a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2etest.Eventually(t, time.Minute, "only-a collected", gone(func() error {
			_, err := cms.Get(context.Background(), "only-a", metav1.GetOptions{})
			return err
		}))
		t.Logf("the garbage collector deleted the dependent %v after its owner", time.Since(begin).Round(time.Millisecond))
		// A dependent with another owner stays; the collector drops the
		// reference to the deleted owner.
		e2etest.Eventually(t, time.Minute, "a-and-b keeps only owner-b", func() error {
			cm, err := cms.Get(context.Background(), "a-and-b", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(cm.OwnerReferences, []metav1.OwnerReference{refB}) {
				return fmt.Errorf("ownerReferences %+v", cm.OwnerReferences)
			}
			return nil
		})

		if err := cms.Delete(context.Background(), "owner-b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2etest.Eventually(t, time.Minute, "a-and-b collected", gone(func() error {
			_, err := cms.Get(context.Background(), "a-and-b", metav1.GetOptions{})
			return err
		}))
	})

	t.Run("namespace deletion", func(t *testing.T) {
		ns := namespace(t, cs, "doomed")
		create(t, cs.CoreV1().ConfigMaps(ns), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}})
		create(t, cs.CoreV1().Secrets(ns), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret"}})
		pvc := create(t, cs.CoreV1().PersistentVolumeClaims(ns), &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
		if !slices.Contains(pvc.Finalizers, "kubernetes.io/pvc-protection") {
			t.Errorf("the PVC's finalizers are %q; want the API server's kubernetes.io/pvc-protection (or the test proves less)", pvc.Finalizers)
		}

		begin := time.Now()
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e2etest.Eventually(t, 2*time.Minute, "namespace removed", gone(func() error {
			_, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			return err
		}))
		t.Logf("the namespace controller removed the namespace and its content in %v", time.Since(begin).Round(time.Millisecond))
		for what, list := range map[string]func() (int, error){
			"configmaps": func() (int, error) {
				l, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
				return len(l.Items), err
			},
			"secrets": func() (int, error) {
				l, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{})
				return len(l.Items), err
			},
			"persistentvolumeclaims": func() (int, error) {
				l, err := cs.CoreV1().PersistentVolumeClaims(ns).List(context.Background(), metav1.ListOptions{})
				return len(l.Items), err
			},
		} {
			if n, err := list(); err != nil || n != 0 {
				t.Errorf("%s left in the deleted namespace: %d (%v)", what, n, err)
			}
		}
	})

	t.Run("service-account tokens", func(t *testing.T) {
		ns := namespace(t, cs, "tokens")
		// The serviceaccount controller makes the default account.
		e2etest.Eventually(t, time.Minute, "default service account", func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
			return err
		})
		// The token controller fills a token Secret for it, signed with the
		// key the API server verifies.
		secrets := cs.CoreV1().Secrets(ns)
		create(t, secrets, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "default-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
			Type:       corev1.SecretTypeServiceAccountToken,
		})
		var token string
		e2etest.Eventually(t, time.Minute, "token minted", func() error {
			s, err := secrets.Get(context.Background(), "default-token", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if token = string(s.Data[corev1.ServiceAccountTokenKey]); token == "" {
				return fmt.Errorf("no %s in the secret yet", corev1.ServiceAccountTokenKey)
			}
			return nil
		})
		review, err := cs.AuthenticationV1().TokenReviews().Create(context.Background(),
			&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := "system:serviceaccount:" + ns + ":default"; !review.Status.Authenticated || review.Status.User.Username != want {
			t.Errorf("TokenReview of the minted token: authenticated %v as %q (%s); want %s",
				review.Status.Authenticated, review.Status.User.Username, review.Status.Error, want)
		}
	})
}

// namespace creates a namespace named name.
func namespace(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// creator is a typed client's Create.
type creator[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
}

// create creates obj through c and returns what the API server stored.
func create[T any](t *testing.T, c creator[T], obj T) T {
	t.Helper()
	got, err := c.Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ownerRef is an owner reference to cm.
func ownerRef(cm *corev1.ConfigMap) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
}

// gone turns a Get into a condition: nil once it answers 404.
func gone(get func() error) func() error {
	return func() error {
		err := get()
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there")
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
