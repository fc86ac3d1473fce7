package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// webhookCertSecret is the Secret of deploy/components/webhook-cert, in
// the host's namespace.
const webhookCertSecret = "kopf-wasm-webhook-cert"

// roleRules are the rules of the Role name in YAML documents.
func roleRules(t *testing.T, docs, name string) []rbacv1.PolicyRule {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		var role rbacv1.Role
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if role.Kind == "Role" && role.Name == name {
			return role.Rules
		}
	}
	t.Fatalf("no Role %s in:\n%s", name, docs)
	return nil
}

// checkWebhookCertSecret: the host, as the ServiceAccount with the
// component's Role, created the certificate's Secret, and the managed
// configurations trust its CA.
func checkWebhookCertSecret(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	e2etest.Eventually(t, 30*time.Second, "the caBundle is the Secret's ca.crt", func() error {
		sec, err := cs.CoreV1().Secrets(ns).Get(t.Context(), webhookCertSecret, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sec.Type != "kubernetes.io/tls" || len(sec.Data["tls.crt"]) == 0 || len(sec.Data["tls.key"]) == 0 {
			return fmt.Errorf("the Secret: type %q, keys %d", sec.Type, len(sec.Data))
		}
		v, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), managedWebhooks, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, h := range v.Webhooks {
			if !bytes.Equal(h.ClientConfig.CABundle, sec.Data["ca.crt"]) {
				return fmt.Errorf("webhook %s's caBundle is not the Secret's ca.crt", h.Name)
			}
		}
		return nil
	})
}

// checkOtherSecrets: the host's account may not read or list Secrets
// beyond the certificate's (its Role names that one).
func checkOtherSecrets(t *testing.T, limited kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := limited.CoreV1().Secrets(ns).Get(t.Context(), "not-"+webhookCertSecret, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading another Secret of %s as the host's ServiceAccount: %v; want forbidden", ns, err)
	}
	if _, err := limited.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing the Secrets of %s as the host's ServiceAccount: %v; want forbidden", ns, err)
	}
}
