package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/rbac"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestDeployE2E checks deploy/ on the real API server: every overlay
// applies (kubectl apply --dry-run=server -k), the handlers' RBAC of the
// single overlay is what `kopf-wasm rbac` prints, the base grants what the
// host needs beyond the handlers' resources, and the host run with a token
// of the deployment's ServiceAccount (TokenRequest), with the RBAC of the
// single, HA and sharded overlays applied, serves everything it can:
// handlers, Events, Module resources, leader election (the Lease in its
// namespace), Kopf's peering (keep-alives on the ClusterKopfPeering),
// admission webhooks through managed configurations with the certificate
// kept in the Secret of the HA overlay's webhook-cert component (its Role
// is what `kopf-wasm rbac --webhook-cert-secret` prints), a CRD conversion,
// /readyz, and /metrics for a scraper allowed by kopf-wasm-metrics-reader
// (others refused); then, run with --shards, its membership Lease. What is
// outside its role is refused (Secrets but the certificate's, Leases in
// another namespace).
func TestDeployE2E(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml"),
		filepath.Join(root, "examples", "10-conversion", "crd.yaml"), filepath.Join(root, "deploy", "peering", "crds.yaml")}})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	cs := kubernetes.NewForConfigOrDie(env.Config)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	const ns = "kopf-wasm"
	// A dry run creates nothing: the namespace must exist for the objects
	// in it.
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	overlays, _ := filepath.Glob(filepath.Join(root, "deploy", "overlays", "*"))
	for _, dir := range append([]string{filepath.Join(root, "deploy", "base")}, overlays...) {
		out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "apply", "--dry-run=server", "-k", dir).CombinedOutput()
		if err != nil {
			t.Errorf("kubectl apply --dry-run=server -k %s: %v\n%s", dir, err, out)
		}
	}

	mod := wasmtest.Path(t, "kopfexample")
	t.Run("handlers' RBAC is the rbac command's", func(t *testing.T) {
		r := run(t.Context(), "", "rbac", "--name", "kopf-wasm-handlers", "--service-account-namespace", ns, mod)
		if r.code != 0 {
			t.Fatalf("rbac: %+v", r)
		}
		want := clusterRoleRules(t, r.out, "kopf-wasm-handlers")
		file, err := os.ReadFile(filepath.Join(root, "deploy", "overlays", "single", "handlers-rbac.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := clusterRoleRules(t, string(file), "kopf-wasm-handlers"); !slices.EqualFunc(got, want, ruleEqual) {
			t.Errorf("deploy/overlays/single/handlers-rbac.yaml has the rules\n%v\nkopf-wasm rbac prints\n%v", got, want)
		}
	})
	t.Run("the base grants the host's own needs", func(t *testing.T) {
		base, err := os.ReadFile(filepath.Join(root, "deploy", "base", "rbac.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		granted := clusterRoleRules(t, string(base), "kopf-wasm")
		// Modules with webhook and convert handlers: what the rbac command
		// grants beyond their handlers' resources.
		r := run(t.Context(), "", "rbac", wasmtest.Path(t, "09-admission"), wasmtest.Path(t, "10-conversion"))
		if r.code != 0 {
			t.Fatalf("rbac: %+v", r)
		}
		for _, rule := range clusterRoleRules(t, r.out, "kopf-wasm") {
			for _, g := range rule.APIGroups {
				if g != "" && g != "admissionregistration.k8s.io" && g != "apiextensions.k8s.io" && !slices.Contains(rbac.PeeringGroups, g) {
					continue
				}
				for _, res := range rule.Resources {
					for _, verb := range rule.Verbs {
						if !allows(granted, g, res, verb) {
							t.Errorf("deploy/base/rbac.yaml does not grant %s on %s.%s, which kopf-wasm rbac does", verb, res, g)
						}
					}
				}
			}
		}
	})
	t.Run("the webhook certificate's Role is the rbac command's", func(t *testing.T) {
		r := run(t.Context(), "", "rbac", "--name", "kopf-wasm", "--service-account-namespace", ns, "--webhook-cert-secret", ns+"/"+webhookCertSecret, mod)
		if r.code != 0 {
			t.Fatalf("rbac: %+v", r)
		}
		want := roleRules(t, r.out, "kopf-wasm-webhook-cert")
		file, err := os.ReadFile(filepath.Join(root, "deploy", "components", "webhook-cert", "webhook-cert-rbac.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := roleRules(t, string(file), "kopf-wasm-webhook-cert"); !slices.EqualFunc(got, want, ruleEqual) {
			t.Errorf("deploy/components/webhook-cert has the rules\n%v\nkopf-wasm rbac prints\n%v", got, want)
		}
	})

	// The real thing: the RBAC of the overlays (single, then the Roles of
	// the HA and sharded ones) and the default peering objects applied, the
	// host as the ServiceAccount.
	for _, args := range [][]string{{"-k", "deploy/overlays/single"}, {"-k", "deploy/overlays/ha"}, {"-k", "deploy/overlays/sharded"},
		{"-f", "deploy/peering/objects.yaml"}} {
		if out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "apply", args[0], filepath.Join(root, args[1])).CombinedOutput(); err != nil {
			t.Fatalf("kubectl apply %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	hostToken := token(t, cs, ns, "kopf-wasm")
	kubeconfig := tokenKubeconfig(t, env.Config, hostToken)
	scraper := "scraper"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: scraper}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kopf-wasm-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: scraper, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scraperToken := token(t, cs, ns, scraper)

	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	// Events of successes too, to see that the account may post them.
	config := writeFile(t, t.TempDir(), "settings.yaml", "posting: {level: info}\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr e2etest.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &e2etest.LogBuffer{}, Err: &stderr},
			[]string{"run", "--kubeconfig", kubeconfig, "-A", "--module-resources", "--log-format", "json",
				"--leader-elect", "--leader-elect-namespace", ns, "-P", "default",
				"--webhook-listen", "127.0.0.1:0", "--webhook-host", "127.0.0.1", "--webhook-managed", managedWebhooks,
				"--webhook-cert-secret", ns + "/" + webhookCertSecret,
				"--metrics-bind-address", metricsAddr, "--metrics-secure", "--metrics-auth",
				"--health-probe-bind-address", healthAddr, "--config", config,
				mod, wasmtest.Path(t, "09-admission"), wasmtest.Path(t, "10-conversion")})
	}()
	kex := dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "deployed"}, "spec": map[string]any{"field": "value"}}}
	if _, err := kex.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alive := func() error {
		select {
		case code := <-done:
			done <- code
			return fmt.Errorf("run exited with %d; stderr:\n%s", code, stderr.String())
		default:
			return nil
		}
	}
	e2etest.Eventually(t, 90*time.Second, "the object handled as the ServiceAccount", func() error {
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		got, err := kex.Get(t.Context(), "deployed", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if msg, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "message"); msg != "hello world" {
			return fmt.Errorf("status.create_fn.message %q", msg)
		}
		return nil
	})
	e2etest.Eventually(t, 30*time.Second, "an Event posted", func() error {
		evs, err := cs.CoreV1().Events("default").List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=deployed"})
		if err != nil || len(evs.Items) == 0 {
			return fmt.Errorf("no Event about the object (%v)", err)
		}
		return nil
	})
	checkLeaderAndPeering(t, cs, dyn, ns)
	checkWebhooks(t, cs, dyn, alive)
	checkWebhookCertSecret(t, cs, ns)
	checkConversion(t, dyn, alive)
	e2etest.Eventually(t, 30*time.Second, "/readyz", func() error {
		code, body := fetch(t, "http://"+healthAddr+"/readyz", "")
		if code != http.StatusOK {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	if code, body := fetch(t, "https://"+metricsAddr+"/metrics", scraperToken); code != http.StatusOK ||
		!strings.Contains(body, `kopf_wasm_handler_calls_total{handler="create_fn",module="kopfexample",outcome="success"}`) ||
		!strings.Contains(body, "controller_runtime_reconcile_total") || !strings.Contains(body, "workqueue_adds_total") {
		t.Errorf("/metrics as the scraper: %d, want 200 with the handler's, reconcile and workqueue metrics:\n%.2000s", code, body)
	}
	if code, body := fetch(t, "https://"+metricsAddr+"/metrics", hostToken); code != http.StatusForbidden {
		t.Errorf("/metrics as the host's account (not a reader): %d %s, want 403", code, body)
	}
	if code, _ := fetch(t, "https://"+metricsAddr+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	if code, _ := fetch(t, "https://"+metricsAddr+"/metrics", "not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a bad token: %d, want 401", code)
	}

	// Outside the role: refused.
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = hostToken
	limited := kubernetes.NewForConfigOrDie(cfg)
	if _, err := limited.CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing secrets as the host's ServiceAccount: %v; want forbidden", err)
	}
	checkOtherSecrets(t, limited, ns)
	if _, err := limited.CoordinationV1().Leases("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Leases outside the host's namespace as its ServiceAccount: %v; want forbidden", err)
	}

	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exited with %d; stderr:\n%s", code, stderr.String())
	}
	if refused := refusals(stderr.String()); len(refused) > 0 {
		t.Errorf("the host was refused something:\n%s", strings.Join(refused, "\n"))
	}
	runSharded(t, cs, kex, kubeconfig, ns, mod)
}

// clusterRoleRules are the rules of the ClusterRole name in YAML documents.
func clusterRoleRules(t *testing.T, docs, name string) []rbacv1.PolicyRule {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if role.Kind == "ClusterRole" && role.Name == name {
			return role.Rules
		}
	}
	t.Fatalf("no ClusterRole %s in:\n%s", name, docs)
	return nil
}

func ruleEqual(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Verbs, b.Verbs) &&
		slices.Equal(a.ResourceNames, b.ResourceNames)
}

// allows says whether a rule of rules grants verb on resource in group.
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// token asks for a token of a ServiceAccount (TokenRequest).
func token(t *testing.T, cs kubernetes.Interface, ns, sa string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

// tokenKubeconfig writes a kubeconfig for the cluster of admin with a
// bearer token.
func tokenKubeconfig(t *testing.T, admin *rest.Config, tok string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: tok}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	out := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// fetch gets url (TLS unverified: the metrics certificate is
// self-signed) with an optional bearer token.
func fetch(t *testing.T, url, tok string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
