package testenv_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// TestAPIServerFlagsE2E passes audit-log flags to kube-apiserver and finds
// a namespace creation in the audit log it writes.
func TestAPIServerFlagsE2E(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	const policyYAML = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n" +
		"rules:\n- level: Metadata\n  verbs: [create]\n  resources: [{group: \"\", resources: [namespaces]}]\n- level: None\n"
	if err := os.WriteFile(policy, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	env := testenv.Start(t, testenv.Options{APIServerFlags: map[string]string{
		"audit-policy-file": policy,
		"--audit-log-path":  auditLog, // leading dashes are tolerated
	}})

	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(auditLog)
	if err != nil {
		t.Fatalf("the API server wrote no audit log: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string `json:"verb"`
			ObjectRef struct {
				Resource, Name string
			} `json:"objectRef"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.Verb == "create" && ev.ObjectRef.Resource == "namespaces" && ev.ObjectRef.Name == "audited" {
			return
		}
	}
	t.Fatalf("no audit event for creating the namespace in %s (scan error: %v)", auditLog, sc.Err())
}
