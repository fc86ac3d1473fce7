package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// The names the host writes under, with its default settings.
const (
	prefix    = "kopf.zalando.org/"
	finalizer = "kopf.zalando.org/KopfFinalizerMarker"
	// hostAgent is the user agent of the host's requests (the kube
	// package's default); the suite's own client sends another.
	hostAgent = "kopf-wasm"
	// patience bounds every wait for a state the host should reach.
	patience = 30 * time.Second
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// suite is what every scenario shares: one control plane with the
// kopfexamples CRD and an audit log, and the test module.
type suite struct {
	env      *testenv.Env
	dyn      dynamic.Interface
	audit    *auditLog
	module   string
	cacheDir string
}

// auditPolicy logs every write once, when its response is complete; writes
// to kopfexamples with their request body (to show on failures what each
// write did).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - group: kopf.dev
    resources: [kopfexamples, kopfexamples/status]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

func startSuite(t *testing.T) *suite {
	t.Helper()
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy, logPath := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{
		CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")},
		APIServerFlags: map[string]string{
			"audit-policy-file": policy, "audit-log-path": logPath, "audit-log-maxsize": "1000000",
		},
	})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{env: env, dyn: dyn, audit: &auditLog{path: logPath},
		module: wasmtest.Path(t, "testguests/conformance"), cacheDir: filepath.Join(dir, "wasm-cache")}
	s.warm(t)
	return s
}

// warm compiles the module into the shared compilation cache once, so that
// the scenarios' hosts load it from there.
func (s *suite) warm(t *testing.T) {
	t.Helper()
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- host.Run(ctx, s.hostOptions("conformance-warm-up", rec)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("warm-up host: %v", err)
		}
	}()
	e2etest.Eventually(t, 2*time.Minute, "the warm-up host watching", func() error {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("host.Run returned: %v", err)
		default:
		}
		if len(rec.find("", "watching")) == 0 {
			return errors.New("not yet")
		}
		return nil
	})
}

// hostOptions are the options of a scenario's host: the test module, the
// namespace alone, Kopf's defaults except a 1s backoff after arbitrary
// errors (Kopf: 60s), no reloading.
func (s *suite) hostOptions(ns string, rec *recorder) host.Options {
	set := settings.Default()
	set.Execution.DefaultBackoff = time.Second
	set.Wasm.CacheDir = s.cacheDir
	set.Modules.ReloadInterval = 0 // no reloading
	set.Process.ShutdownTimeout = patience
	return host.Options{
		Modules: []string{s.module}, Kubeconfig: s.env.Kubeconfig, Namespaces: []string{ns},
		Settings: &set, Logger: slog.New(rec),
	}
}

// S is one scenario: its namespace, its hosts and what they logged.
type S struct {
	*testing.T
	suite *suite
	ns    string
	rec   *recorder
}

func newScenario(t *testing.T, su *suite, ns string) *S {
	s := &S{T: t, suite: su, ns: ns, rec: &recorder{}}
	nsObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := su.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(context.Background(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Registered first, so it runs after the hosts have stopped.
	t.Cleanup(s.finalChecks)
	return s
}

// finalChecks fail the scenario on framework errors in any scenario, and
// show the host's log and writes when it failed.
func (s *S) finalChecks() {
	for _, e := range s.rec.all() {
		if strings.Contains(e.msg, "Throttling for") || strings.Contains(e.msg, "cannot be applied") ||
			strings.Contains(e.msg, "cannot be stored") {
			s.Errorf("the host reported a framework error: %s", e)
		}
	}
	if s.Failed() {
		s.Logf("host log of %s:\n%s", s.ns, s.rec.dump())
		s.Logf("the host's writes in %s:\n%s", s.ns, s.suite.audit.describe(s.ns))
	}
}

// runningHost is one host.Run of a scenario.
type runningHost struct {
	s      *S
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// start runs a host for the scenario's namespace until stop or the end of
// the scenario, and waits until it watches.
func (s *S) start() *runningHost {
	s.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &runningHost{s: s, cancel: cancel, done: make(chan error, 1)}
	before := len(s.rec.find("", "watching"))
	go func() { h.done <- host.Run(ctx, s.suite.hostOptions(s.ns, s.rec)) }()
	s.Cleanup(h.stop)
	e2etest.Eventually(s.T, patience, "the host watching", func() error {
		select {
		case err := <-h.done:
			h.done <- err
			return fmt.Errorf("host.Run returned early: %v", err)
		default:
		}
		if len(s.rec.find("", "watching")) <= before {
			return errors.New("not yet")
		}
		return nil
	})
	return h
}

// stop stops the host as SIGTERM would and waits until it has.
func (h *runningHost) stop() {
	h.once.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.s.Errorf("host: %v", err)
			}
		case <-time.After(patience + 10*time.Second):
			h.s.Error("the host did not stop")
		}
	})
}

// obj describes an object to create.
type obj struct {
	labels      map[string]string
	annotations map[string]string
	spec        map[string]any
}

func (s *S) client() dynamic.ResourceInterface {
	return s.suite.dyn.Resource(kopfexamples).Namespace(s.ns)
}

func (s *S) create(name string, o obj) {
	s.Helper()
	meta := map[string]any{"name": name}
	if len(o.labels) > 0 {
		meta["labels"] = toAny(o.labels)
	}
	if len(o.annotations) > 0 {
		meta["annotations"] = toAny(o.annotations)
	}
	spec := o.spec
	if spec == nil {
		spec = map[string]any{}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta, "spec": spec}}
	if _, err := s.client().Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		s.Fatal(err)
	}
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// patch merge-patches the object (a JSON document).
func (s *S) patch(name, doc string) {
	s.Helper()
	if _, err := s.client().Patch(context.Background(), name, types.MergePatchType, []byte(doc), metav1.PatchOptions{}); err != nil {
		s.Fatal(err)
	}
}

// patchStatus merge-patches the object's status subresource.
func (s *S) patchStatus(name, doc string) {
	s.Helper()
	if _, err := s.client().Patch(context.Background(), name, types.MergePatchType, []byte(doc), metav1.PatchOptions{}, "status"); err != nil {
		s.Fatal(err)
	}
}

// del asks the API server to delete the object.
func (s *S) del(name string) {
	s.Helper()
	if err := s.client().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		s.Fatal(err)
	}
}

// get reads the object; nil when it does not exist.
func (s *S) get(name string) *unstructured.Unstructured {
	s.Helper()
	u, err := s.client().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		s.Fatal(err)
	}
	return u
}

func (s *S) mustGet(name string) *unstructured.Unstructured {
	s.Helper()
	u := s.get(name)
	if u == nil {
		s.Fatalf("%s/%s does not exist", s.ns, name)
	}
	return u
}

func (s *S) waitFor(what string, cond func() error) {
	s.Helper()
	e2etest.Eventually(s.T, patience, what, cond)
}

// waitCall waits until the handler was called for the object with the
// reason at the retry.
func (s *S) waitCall(name, handler, reason string, retry int) {
	s.Helper()
	want := fmt.Sprintf("%s %s %d", handler, reason, retry)
	s.waitFor(fmt.Sprintf("%s called (%s)", handler, want), func() error {
		for _, c := range s.calls(name) {
			if c.String() == want {
				return nil
			}
		}
		return fmt.Errorf("calls so far: %v", s.calls(name))
	})
}

// waitRecord waits until the handler's progress record on the object
// matches want.
func (s *S) waitRecord(name, id string, want record) {
	s.Helper()
	s.waitFor(fmt.Sprintf("progress of %s is %s", id, want), func() error {
		u := s.get(name)
		if u == nil {
			return errors.New("the object is gone")
		}
		got, ok, err := progressOf(u, id)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("no progress record (annotations %v)", u.GetAnnotations())
		case !want.matches(got):
			return fmt.Errorf("progress is %s", got)
		}
		return nil
	})
}

// waitGone waits until the object no longer exists.
func (s *S) waitGone(name string) {
	s.Helper()
	s.waitFor(name+" gone", func() error {
		if u := s.get(name); u != nil {
			return fmt.Errorf("still there: finalizers %v, annotations %v", u.GetFinalizers(), u.GetAnnotations())
		}
		return nil
	})
}

// waitHandled waits until the object's current essence is handled: the
// diff-base matches it and no progress record is left.
func (s *S) waitHandled(name string) {
	s.Helper()
	s.waitFor(name+" handled", func() error {
		u := s.get(name)
		if u == nil {
			return errors.New("the object is gone")
		}
		if p := progressKeys(u); len(p) > 0 {
			return fmt.Errorf("progress left: %v", p)
		}
		base, ok := diffBase(u)
		if !ok {
			return errors.New("no diff-base")
		}
		if want := essence(u); !jsonEqual(base, want) {
			return fmt.Errorf("diff-base %v, essence %v", base, want)
		}
		return nil
	})
}

// quiet waits until neither the host's log nor its writes in the
// namespace changed for a while: whatever the host would still do about
// the last change has been done.
func (s *S) quiet() {
	s.Helper()
	const still = 1500 * time.Millisecond
	deadline := time.Now().Add(patience)
	last, since := "", time.Now()
	for time.Now().Before(deadline) {
		now := fmt.Sprintf("%d/%d", len(s.rec.all()), len(s.suite.audit.events(s.ns, "")))
		if now != last {
			last, since = now, time.Now()
		} else if time.Since(since) >= still {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Fatalf("the host did not go quiet within %s", patience)
}

// call is one handler call, as the test module logs it.
type call struct {
	handler, reason string
	retry           string
	step            string
	finalized       bool
	old, new        string
}

func (c call) String() string { return fmt.Sprintf("%s %s %s", c.handler, c.reason, c.retry) }

// calls lists the object's handler calls in the order they were logged.
func (s *S) calls(name string) []call {
	var out []call
	for _, e := range s.rec.all() {
		if e.msg != "call" || e.name() != name || e.attrs["module"] == "" {
			continue
		}
		handler := e.attrs["handler"]
		if sub := e.attrs["subhandler"]; sub != "" { // a sub-handler, called within its parent's call
			handler = sub
		}
		out = append(out, call{handler: handler, reason: e.attrs["reason"], retry: e.attrs["retry"],
			step: e.attrs["step"], finalized: e.attrs["finalized"] == "true", old: e.attrs["old"], new: e.attrs["new"]})
	}
	return out
}

// wantCalls asserts the object's calls exactly: the same handlers, each
// called in the given order ("handler reason retry"). Calls of different
// handlers are not ordered (timers and daemons run beside the cycles).
func (s *S) wantCalls(name string, want ...string) {
	s.Helper()
	got := map[string][]string{}
	for _, c := range s.calls(name) {
		got[c.handler] = append(got[c.handler], c.String())
	}
	exp := map[string][]string{}
	for _, w := range want {
		h, _, _ := strings.Cut(w, " ")
		exp[h] = append(exp[h], w)
	}
	if fmt.Sprint(sortedGroups(got)) != fmt.Sprint(sortedGroups(exp)) {
		s.Errorf("calls of %s:\n got  %v\n want %v", name, sortedGroups(got), sortedGroups(exp))
	}
}

func sortedGroups(m map[string][]string) []string {
	var out []string
	for _, calls := range m {
		out = append(out, calls...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		hi, _, _ := strings.Cut(out[i], " ")
		hj, _, _ := strings.Cut(out[j], " ")
		return hi < hj
	})
	return out
}

// callOf returns the first call of the handler with the reason and retry.
func (s *S) callOf(name, handler, reason string, retry int) call {
	s.Helper()
	want := fmt.Sprintf("%s %s %d", handler, reason, retry)
	for _, c := range s.calls(name) {
		if c.String() == want {
			return c
		}
	}
	s.Fatalf("no call %q of %s; calls: %v", want, name, s.calls(name))
	return call{}
}

// wantWrites asserts the host's writes to the object so far, as counted in
// the audit log (see [writeSummary]); any of the alternatives may match.
func (s *S) wantWrites(name string, alternatives ...string) {
	s.Helper()
	got := s.suite.audit.summary(s.ns, name)
	if !slices.Contains(alternatives, got) {
		s.Errorf("the host's writes to %s: got %q, want %s", name, got, strings.Join(quoteAll(alternatives), " or "))
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// wantLog asserts that the host logged a message about the object that
// contains text, n times.
func (s *S) wantLog(name, text string, n int) {
	s.Helper()
	if got := len(s.rec.find(name, text)); got != n {
		s.Errorf("log lines about %s containing %q: %d, want %d", name, text, got, n)
	}
}

// --- the object's state -------------------------------------------------

// record is a progress record's fields that scenarios check; delayed is
// whether a delay is set.
type record struct {
	Purpose          string
	Retries          int
	Success, Failure bool
	Delayed          bool
	Message          string // a substring; "" checks nothing
}

func (r record) String() string {
	return fmt.Sprintf("{purpose %s, retries %d, success %v, failure %v, delayed %v, message %q}",
		r.Purpose, r.Retries, r.Success, r.Failure, r.Delayed, r.Message)
}

func (r record) matches(got record) bool {
	return r.Purpose == got.Purpose && r.Retries == got.Retries && r.Success == got.Success &&
		r.Failure == got.Failure && r.Delayed == got.Delayed && strings.Contains(got.Message, r.Message)
}

// progressOf reads the handler's progress record from its annotation
// (Kopf's key: "/" becomes ".").
func progressOf(u *unstructured.Unstructured, id string) (record, bool, error) {
	raw, ok := u.GetAnnotations()[prefix+strings.ReplaceAll(id, "/", ".")]
	if !ok {
		return record{}, false, nil
	}
	var j struct {
		Started, Stopped, Delayed *string
		Purpose                   string
		Retries                   int
		Success, Failure          bool
		Message                   string
	}
	if err := json.Unmarshal([]byte(raw), &j); err != nil {
		return record{}, true, fmt.Errorf("progress record of %s: %w: %s", id, err, raw)
	}
	if j.Started == nil {
		return record{}, true, fmt.Errorf("progress record of %s has no started time: %s", id, raw)
	}
	return record{Purpose: j.Purpose, Retries: j.Retries, Success: j.Success, Failure: j.Failure,
		Delayed: j.Delayed != nil, Message: j.Message}, true, nil
}

// progressKeys are the object's annotations under the host's prefix other
// than the diff-base.
func progressKeys(u *unstructured.Unstructured) []string {
	var out []string
	for k := range u.GetAnnotations() {
		if strings.HasPrefix(k, prefix) && k != prefix+"last-handled-configuration" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// diffBase is the stored essence: status.kopf.last-handled-configuration
// (this project's default), else Kopf's annotation.
func diffBase(u *unstructured.Unstructured) (map[string]any, bool) {
	raw, ok, _ := unstructured.NestedString(u.Object, "status", "kopf", "last-handled-configuration")
	if !ok {
		raw, ok = u.GetAnnotations()[prefix+"last-handled-configuration"]
	}
	if !ok {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, false
	}
	return m, true
}

// essence is the object's essence as Kopf builds it (kopf.md §3.4): spec,
// labels and annotations except Kopf's own, empty stanzas dropped.
func essence(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	meta := map[string]any{}
	if l := u.GetLabels(); len(l) > 0 {
		meta["labels"] = toAny(l)
	}
	ann := map[string]string{}
	for k, v := range u.GetAnnotations() {
		if !kopfOwned(u.GetAnnotations(), k) && k != "kubectl.kubernetes.io/last-applied-configuration" {
			ann[k] = v
		}
	}
	if len(ann) > 0 {
		meta["annotations"] = toAny(ann)
	}
	if len(meta) > 0 {
		out["metadata"] = meta
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok && len(spec) > 0 {
		out["spec"] = spec
	}
	return out
}

// kopfOwned tells whether an annotation belongs to a Kopf-owned prefix
// (kopf.md §3.3): kopf.zalando.org, *.kopf.zalando.org, or one marked with
// <prefix>/kopf-managed.
func kopfOwned(annotations map[string]string, key string) bool {
	p, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	_, marked := annotations[p+"/kopf-managed"]
	return p+"/" == prefix || strings.HasSuffix(p+"/", "."+prefix) || marked
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func hasFinalizer(u *unstructured.Unstructured) bool {
	return slices.Contains(u.GetFinalizers(), finalizer)
}

// wantState asserts the settled object: finalizer or not, no progress
// records left, and the results under status.<id> exactly for the ids
// given (others: none).
func (s *S) wantState(name string, finalized bool, results map[string]string) {
	s.Helper()
	u := s.mustGet(name)
	if hasFinalizer(u) != finalized {
		s.Errorf("%s: finalizers %v, want ours: %v", name, u.GetFinalizers(), finalized)
	}
	if p := progressKeys(u); len(p) > 0 {
		s.Errorf("%s: progress records left: %v", name, p)
	}
	got := map[string]string{}
	status, _ := u.Object["status"].(map[string]any)
	for id, v := range status {
		if id == "kopf" {
			continue
		}
		r, _ := json.Marshal(v)
		got[id] = string(r)
	}
	if results == nil {
		results = map[string]string{}
	}
	if fmt.Sprint(got) != fmt.Sprint(results) {
		s.Errorf("%s: results in status:\n got  %v\n want %v", name, got, results)
	}
}

// result is a successful changing handler's result, as the module returns it.
func result(reason string, retry int) string {
	return fmt.Sprintf(`{"reason":%q,"retry":%d}`, reason, retry)
}

// --- the host's log -------------------------------------------------------

// recorder is a slog.Handler that keeps every record with its attributes
// flattened ("object.name"), for scenarios to search.
type recorder struct {
	mu      sync.Mutex
	entries []entry
}

type entry struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (e entry) String() string {
	keys := make([]string, 0, len(e.attrs))
	for k := range e.attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", e.level, e.msg)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, e.attrs[k])
	}
	return b.String()
}

// name is the object an entry is about: the guest's or the spawner's
// "name", or the reactor's "object.name".
func (e entry) name() string {
	if n := e.attrs["object.name"]; n != "" {
		return n
	}
	return e.attrs["name"]
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool {
		flatten(attrs, "", a)
		return true
	})
	r.add(entry{level: rec.Level, msg: rec.Message, attrs: attrs})
	return nil
}

func (r *recorder) add(e entry) {
	r.mu.Lock()
	r.entries = append(r.entries, e)
	r.mu.Unlock()
}

func (r *recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &boundRecorder{r: r, attrs: attrs}
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

// boundRecorder is a recorder with attributes added by slog.Logger.With.
type boundRecorder struct {
	r     *recorder
	attrs []slog.Attr
}

func (b *boundRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (b *boundRecorder) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(b.attrs...)
	return b.r.Handle(ctx, rec)
}

func (b *boundRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &boundRecorder{r: b.r, attrs: append(slices.Clone(b.attrs), attrs...)}
}

func (b *boundRecorder) WithGroup(string) slog.Handler { return b }

func flatten(into map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			flatten(into, prefix+a.Key+".", g)
		}
		return
	}
	into[prefix+a.Key] = fmt.Sprint(v.Any())
}

func (r *recorder) all() []entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.entries)
}

// find returns the entries about the object name ("" any) whose message
// contains text.
func (r *recorder) find(name, text string) []entry {
	var out []entry
	for _, e := range r.all() {
		if (name == "" || e.name() == name) && strings.Contains(e.msg, text) {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) dump() string {
	var b strings.Builder
	for _, e := range r.all() {
		b.WriteString("  ")
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// --- the audit log --------------------------------------------------------

// auditLog reads the API server's audit log as it grows.
type auditLog struct {
	path string

	mu   sync.Mutex
	off  int64
	evts []auditEvent
}

// auditEvent is the part of an audit.k8s.io/v1 Event the suite needs.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject json.RawMessage `json:"requestObject"`
}

// read parses the lines added since the last read.
func (a *auditLog) read() {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(a.off, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return // a partial line is read again next time
		}
		a.off += int64(len(line))
		var ev auditEvent
		if json.Unmarshal(line, &ev) != nil || ev.ObjectRef == nil || ev.Stage != "ResponseComplete" ||
			!strings.HasPrefix(ev.UserAgent, hostAgent) {
			continue
		}
		a.evts = append(a.evts, ev)
	}
}

// events are the host's completed writes in the namespace, to the object
// name ("" any object, Events included).
func (a *auditLog) events(ns, name string) []auditEvent {
	a.read()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []auditEvent
	for _, ev := range a.evts {
		if ev.ObjectRef.Namespace == ns && (name == "" || (ev.ObjectRef.Resource == "kopfexamples" && ev.ObjectRef.Name == name)) {
			out = append(out, ev)
		}
	}
	return out
}

// summary counts the host's writes to the object by verb and subresource,
// failed ones apart: "patch=2 patch/status=1 patch/status!404=1".
func (a *auditLog) summary(ns, name string) string {
	counts := map[string]int{}
	for _, ev := range a.events(ns, name) {
		k := ev.Verb
		if ev.ObjectRef.Subresource != "" {
			k += "/" + ev.ObjectRef.Subresource
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 400 {
			k += fmt.Sprintf("!%d", ev.ResponseStatus.Code)
		}
		counts[k]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, counts[k])
	}
	return strings.Join(parts, " ")
}

// describe lists the host's writes in the namespace with their bodies.
func (a *auditLog) describe(ns string) string {
	var b strings.Builder
	for _, ev := range a.events(ns, "") {
		code := 0
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		fmt.Fprintf(&b, "  %s %s/%s %s %d %s\n", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Subresource,
			ev.ObjectRef.Name, code, ev.RequestObject)
	}
	return b.String()
}

func nestedString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}
