package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// rolloutEnv is a control plane that writes an audit log of every write
// to KopfExamples, ConfigMaps and Events, a registry holding the canary
// test guests (canaryv1, canaryv2: every write names its version), and a
// host serving Module resources.
type rolloutEnv struct {
	*reloadEnv
	audit   string
	repo    string
	modules dynamic.ResourceInterface
	cms     dynamic.ResourceInterface
}

func newRolloutEnv(t *testing.T) *rolloutEnv {
	return newRolloutEnvWith(t, nil)
}

// newRolloutEnvWith is newRolloutEnv with the host's options changed by
// opts (given the registry's repository of the test guests).
func newRolloutEnvWith(t *testing.T, opts func(o *host.Options, repo string)) *rolloutEnv {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	const policyYAML = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n" +
		"- level: Request\n  verbs: [create, update, patch, delete]\n  resources:\n" +
		"  - {group: kopf.dev, resources: [kopfexamples, kopfexamples/status]}\n" +
		"  - {group: \"\", resources: [configmaps, events]}\n  - {group: events.k8s.io, resources: [events]}\n" +
		"- level: None\n"
	if err := os.WriteFile(policy, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.log")
	env := testenv.Start(t, testenv.Options{
		CRDPaths:       []string{filepath.Join(root, "examples", "crd.yaml"), filepath.Join(root, "deploy", "crds", "modules.kopf-wasm.dev.yaml")},
		APIServerFlags: map[string]string{"audit-policy-file": policy, "audit-log-path": audit},
	})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &rolloutEnv{
		reloadEnv: &reloadEnv{t: t, env: env, ex: dyn.Resource(schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}).Namespace("default")},
		audit:     audit,
		modules:   dyn.Resource(schema.GroupVersionResource{Group: "kopf-wasm.dev", Version: "v1", Resource: "modules"}),
		cms:       dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default"),
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	e.repo = strings.TrimPrefix(srv.URL, "http://") + "/operators/canary"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	for tag, pkg := range map[string]string{"v1": "testguests/canaryv1", "v2": "testguests/canaryv2"} {
		if _, err := host.Push(context.Background(), wasmtest.Path(t, pkg), e.repo+":"+tag, reg); err != nil {
			t.Fatal(err)
		}
	}
	set := settings.Default()
	set.Modules.TagPollInterval = 0 // never
	set.Rollouts.StatusInterval = 500 * time.Millisecond
	set.Rollouts.ShadowConcurrency = 64 // no call of the shadow test skipped
	// Metrics are recorded while a host serves them.
	o := host.Options{ModuleResources: true, Registry: reg, Settings: &set, Metrics: host.MetricsOptions{BindAddress: "127.0.0.1:0"}}
	if opts != nil {
		opts(&o, e.repo)
	}
	e.run(o)
	return e
}

// apply creates the Module "canary" with spec, or merges spec into it.
func (e *rolloutEnv) apply(spec map[string]any) {
	e.t.Helper()
	if _, err := e.modules.Get(context.Background(), "canary", metav1.GetOptions{}); err != nil {
		mod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf-wasm.dev/v1", "kind": "Module",
			"metadata": map[string]any{"name": "canary"}, "spec": spec}}
		if _, err := e.modules.Create(context.Background(), mod, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	patch, _ := json.Marshal(map[string]any{"spec": spec})
	if _, err := e.modules.Patch(context.Background(), "canary", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// status is the Module's status.
func (e *rolloutEnv) status() map[string]any {
	obj, err := e.modules.Get(context.Background(), "canary", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	return st
}

// versionStatus is the status.versions entry of role (nil if none).
func (e *rolloutEnv) versionStatus(role string) map[string]any {
	vs, _ := e.status()["versions"].([]any)
	for _, v := range vs {
		if m, _ := v.(map[string]any); m["role"] == role {
			return m
		}
	}
	return nil
}

// createAll creates n objects and returns their UIDs by name.
func (e *rolloutEnv) createAll(prefix string, n int) map[string]string {
	e.t.Helper()
	uids := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		e.create(name)
		obj, err := e.ex.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		uids[name] = string(obj.GetUID())
	}
	return uids
}

// auditEvent is what the test reads of an audit log line.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	ObjectRef  struct {
		Resource, Namespace, Name, Subresource string
	} `json:"objectRef"`
	RequestObject  json.RawMessage    `json:"requestObject"`
	ResponseStatus struct{ Code int } `json:"responseStatus"`
	Received       metav1.MicroTime   `json:"requestReceivedTimestamp"`
	Completed      metav1.MicroTime   `json:"stageTimestamp"`
}

// dryRun reports whether the request was a dry run.
func (a auditEvent) dryRun() bool { return strings.Contains(a.RequestURI, "dryRun=All") }

// body is the request's body as text.
func (a auditEvent) body() string { return string(a.RequestObject) }

// audited reads the audit log: the completed writes.
func (e *rolloutEnv) audited() []auditEvent {
	e.t.Helper()
	f, err := os.Open(e.audit)
	if err != nil {
		e.t.Fatalf("the API server wrote no audit log: %v", err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			e.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.ResponseStatus.Code < 300 {
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// written is a write the host made for an object and the version its
// body names: the create handler's result and ConfigMap, the timer's
// and the resume handler's stamps, the create handler's Event.
type written struct {
	what, version string
	ev            auditEvent
}

// writesOf sorts the host's stored (not dry-run) writes by the object
// they are for.
func writesOf(events []auditEvent, names map[string]string) map[string][]written {
	out := map[string][]written{}
	for _, ev := range events {
		if ev.dryRun() {
			continue
		}
		body := ev.body()
		for name := range names {
			for _, v := range []string{"v1", "v2"} {
				switch {
				case ev.ObjectRef.Resource == "kopfexamples" && ev.ObjectRef.Name == name && ev.Verb == "patch" &&
					strings.Contains(body, `"version":"`+v+`"`):
					out[name] = append(out[name], written{"result", v, ev})
				case ev.ObjectRef.Resource == "kopfexamples" && ev.ObjectRef.Name == name && ev.Verb == "patch" &&
					strings.Contains(body, `"canary-timer":"`+v+`-`):
					out[name] = append(out[name], written{"timer", v, ev})
				case ev.ObjectRef.Resource == "kopfexamples" && ev.ObjectRef.Name == name && ev.Verb == "patch" &&
					strings.Contains(body, `"resumed-by":"`+v+`"`):
					out[name] = append(out[name], written{"resume", v, ev})
				case ev.ObjectRef.Resource == "configmaps" && ev.Verb == "create" && strings.Contains(body, `"name":"`+name+`-`+v+`"`):
					out[name] = append(out[name], written{"configmap", v, ev})
				case ev.ObjectRef.Resource == "events" && strings.Contains(body, `"name":"`+name+`"`) &&
					strings.Contains(body, "handled by "+v):
					out[name] = append(out[name], written{"event", v, ev})
				}
			}
		}
	}
	return out
}

// expected is the version that handles the object with uid at percent.
func expected(uid string, percent int) string {
	if rollout.InCanary(uid, percent) {
		return "v2"
	}
	return "v1"
}

// checkHandledOnce checks from the audit log that each object's create handler
// ran once, in the version its UID's share gives (want), writing one
// result, one ConfigMap and one Event.
func checkHandledOnce(t *testing.T, writes map[string][]written, want map[string]string) {
	t.Helper()
	for name, v := range want {
		count := map[string]int{}
		for _, w := range writes[name] {
			if w.what != "timer" && w.what != "resume" {
				count[w.what]++
				if w.version != v {
					t.Errorf("%s: a %s written by %s; its version is %s", name, w.what, w.version, v)
				}
			}
		}
		for _, what := range []string{"result", "configmap", "event"} {
			if count[what] != 1 {
				t.Errorf("%s: %d %s writes in the audit log, want exactly 1 (the create handler ran once)", name, count[what], what)
			}
		}
	}
}

// checkNoOverlap checks that no write naming one version of an object
// overlaps or follows one naming the other version, unless the object
// moved (moves: from the version of the first writes to the other): every
// write of the old version completed before the first of the new one was
// received.
func checkNoOverlap(t *testing.T, writes map[string][]written, first, last map[string]string) {
	t.Helper()
	for name, ws := range writes {
		sort.Slice(ws, func(i, j int) bool { return ws[i].ev.Received.Before(&ws[j].ev.Received) })
		var lastOld, firstNew *auditEvent
		for i := range ws {
			w := &ws[i]
			switch w.version {
			case first[name]:
				if lastOld == nil || lastOld.Completed.Before(&w.ev.Completed) {
					lastOld = &w.ev
				}
			case last[name]:
				if firstNew == nil {
					firstNew = &w.ev
				}
			}
		}
		if first[name] == last[name] {
			continue
		}
		if testing.Verbose() {
			var seq []string
			for _, w := range ws {
				seq = append(seq, fmt.Sprintf("%s:%s@%s-%s", w.what, w.version, w.ev.Received.Format("05.000"), w.ev.Completed.Format("05.000")))
			}
			t.Logf("%s moved from %s to %s: %s", name, first[name], last[name], strings.Join(seq, " "))
		}
		if firstNew == nil {
			t.Errorf("%s: no write of %s after it moved from %s", name, last[name], first[name])
			continue
		}
		if lastOld != nil && firstNew.Received.Before(&lastOld.Completed) {
			t.Errorf("%s: %s wrote at %s, before the last write of %s completed at %s: both versions handled it at once",
				name, last[name], firstNew.Received.Format(time.RFC3339Nano), first[name], lastOld.Completed.Format(time.RFC3339Nano))
		}
	}
}

// TestCanaryE2E rolls canaryv2 out as a canary of canaryv1 through a
// Module resource: at 50 % each object is handled by exactly one version,
// the one its UID's hash gives (the API server's audit log says which
// version made each write); raising the share to 80 % moves objects
// with no write of the new version before the old one's last completed;
// promoting the canary moves the rest the same way. The status shows
// each version's objects and calls.
func TestCanaryE2E(t *testing.T) {
	e := newRolloutEnv(t)
	e.apply(map[string]any{"source": e.repo + ":v1", "canary": map[string]any{"source": e.repo + ":v2", "percent": 50}})
	waitFor(t, "the canary loaded", func() bool { return e.versionStatus(rollout.Canary) != nil })

	uids := e.createAll("obj", 16)
	at50 := map[string]string{}
	for name, uid := range uids {
		at50[name] = expected(uid, 50)
	}
	for name, v := range at50 {
		e.has(name, "create_fn", v)
		waitFor(t, name+" stamped by its timer", func() bool { return strings.HasPrefix(e.annotation(name, "canary-timer"), v+"-") })
	}
	checkHandledOnce(t, writesOf(e.audited(), uids), at50)
	canaries := 0
	for _, v := range at50 {
		if v == "v2" {
			canaries++
		}
	}
	t.Logf("at 50%%: %d of %d objects on the canary", canaries, len(uids))
	waitFor(t, "the status counts each version's objects", func() bool {
		c, s := e.versionStatus(rollout.Canary), e.versionStatus(rollout.Stable)
		return c != nil && s != nil && fmt.Sprint(c["objects"]) == fmt.Sprint(canaries) &&
			fmt.Sprint(s["objects"]) == fmt.Sprint(len(uids)-canaries) && fmt.Sprint(c["calls"]) != "0"
	})

	for _, version := range []string{rollout.Stable, rollout.Canary} {
		labels := map[string]string{"module": "canary", "version": version}
		if calls := metricValue(t, "kopf_wasm_rollout_calls_total", labels); calls == 0 {
			t.Errorf("kopf_wasm_rollout_calls_total%v is 0", labels)
		}
		if n := metricValue(t, "kopf_wasm_rollout_objects", labels); version == rollout.Canary && int(n) != canaries {
			t.Errorf("kopf_wasm_rollout_objects%v = %v, want %d", labels, n, canaries)
		}
	}

	// A share change: the objects in buckets 50-79 move to the canary.
	e.apply(map[string]any{"canary": map[string]any{"source": e.repo + ":v2", "percent": 80}})
	at80 := map[string]string{}
	moved := 0
	for name, uid := range uids {
		at80[name] = expected(uid, 80)
		if at80[name] != at50[name] {
			moved++
		}
	}
	for name, v := range at80 {
		waitFor(t, name+" stamped by "+v, func() bool { return strings.HasPrefix(e.annotation(name, "canary-timer"), v+"-") })
	}
	t.Logf("at 80%%: %d objects moved", moved)

	// Promotion: the canary becomes the only version.
	e.apply(map[string]any{"source": e.repo + ":v2", "canary": nil})
	waitFor(t, "the versions gone from the status", func() bool { return e.status()["versions"] == nil && e.status()["version"] == "2.0.0" })
	last := map[string]string{}
	for name := range uids {
		last[name] = "v2"
		waitFor(t, name+" stamped by v2", func() bool { return strings.HasPrefix(e.annotation(name, "canary-timer"), "v2-") })
	}
	e.create("after")
	e.has("after", "create_fn", "v2")

	writes := writesOf(e.audited(), uids)
	checkHandledOnce(t, writes, at50) // moving never runs the create handler again
	checkNoOverlap(t, writes, at50, at80)
	checkNoOverlap(t, writes, at80, last)
}

// TestShadowE2E serves canaryv1 with canaryv2 as its shadow: the shadow
// gets every call of the serving version and its answers differ (its
// result names v2), which the metrics and the status show, but nothing it
// does is stored: the audit log has no write naming v2 but dry runs.
// Promoting the shadow by editing the Module makes it serve.
func TestShadowE2E(t *testing.T) {
	e := newRolloutEnv(t)
	e.apply(map[string]any{"source": e.repo + ":v1", "shadow": map[string]any{"source": e.repo + ":v2"}})
	waitFor(t, "the shadow loaded", func() bool { return e.status()["shadow"] != nil })
	uids := e.createAll("obj", 5)
	want := map[string]string{}
	for name := range uids {
		want[name] = "v1"
		e.has(name, "create_fn", "v1")
		waitFor(t, name+" stamped by its timer", func() bool { return strings.HasPrefix(e.annotation(name, "canary-timer"), "v1-") })
	}
	waitFor(t, "the differences in the status", func() bool {
		sh, _ := e.status()["shadow"].(map[string]any)
		return sh != nil && fmt.Sprint(sh["differences"]) != "0" && sh["lastDifference"] != ""
	})
	sh, _ := e.status()["shadow"].(map[string]any)
	t.Logf("status.shadow: %v", sh)
	if got := shadowDifferences(t); got == 0 {
		t.Error("kopf_wasm_shadow_differences_total{module=\"canary\"} is 0")
	}

	// A shadow call runs after the serving call has answered, on its own
	// goroutine: its dry run may reach the audit log after the serving
	// version's writes.
	shadowDryRuns := func(events []auditEvent) int {
		n := 0
		for _, ev := range events {
			if ev.dryRun() && ev.ObjectRef.Resource == "configmaps" && strings.Contains(ev.body(), "-v2") {
				n++
			}
		}
		return n
	}
	waitFor(t, "a dry run of the shadow version for every object", func() bool { return shadowDryRuns(e.audited()) >= len(uids) })
	events := e.audited()
	writes := writesOf(events, uids)
	checkHandledOnce(t, writes, want)
	for name, ws := range writes {
		for _, w := range ws {
			if w.version == "v2" {
				t.Errorf("%s: the shadow version's %s was stored: %s %s", name, w.what, w.ev.Verb, w.ev.RequestURI)
			}
		}
	}
	if dry := shadowDryRuns(events); dry != len(uids) {
		t.Errorf("%d dry-run ConfigMap creates of the shadow version in the audit log, want %d (one per object)", dry, len(uids))
	}
	for name := range uids {
		if _, err := e.cms.Get(context.Background(), name+"-v2", metav1.GetOptions{}); err == nil {
			t.Errorf("ConfigMap %s-v2 exists: the shadow's write was stored", name)
		}
	}

	e.apply(map[string]any{"source": e.repo + ":v2", "shadow": nil})
	waitFor(t, "the shadow promoted", func() bool { return e.status()["shadow"] == nil && e.status()["version"] == "2.0.0" })
	e.create("after")
	e.has("after", "create_fn", "v2")
}

// shadowDifferences reads kopf_wasm_shadow_differences_total of module
// canary from the host's metrics.
func shadowDifferences(t *testing.T) float64 {
	return metricValue(t, "kopf_wasm_shadow_differences_total", map[string]string{"module": "canary"})
}

// metricValue reads a counter or gauge of the host's metrics with these
// labels (0 when there is none).
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}
