package host_test

import (
	"context"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestReplayRecordedRunE2E records a real run of reloadv1 on the control
// plane (recording.path set) and replays it offline: against reloadv1
// nothing changes; against replaychanged exactly the patch of the one
// object labelled tier=gold.
func TestReplayRecordedRunE2E(t *testing.T) {
	e := newReloadEnv(t)
	set := settings.Default()
	set.Wasm.CacheDir = t.TempDir()
	set.Recording.Path = filepath.Join(t.TempDir(), "calls.jsonl")
	e.run(host.Options{Modules: []string{wasmtest.Path(t, "testguests/reloadv1")}, Settings: &set})
	for name, labels := range map[string]map[string]any{"plain": nil, "gold": {"tier": "gold"}, "silver": {"tier": "silver"}} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name, "labels": labels}, "spec": map[string]any{}}}
		if _, err := e.ex.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"plain", "gold", "silver"} {
		e.has(name, "create_fn", "v1")
	}

	replay := func(pkg string) host.ReplayReport {
		t.Helper()
		rep, err := host.Replay(context.Background(), host.Replaying{Recording: set.Recording.Path, Module: wasmtest.Path(t, pkg)})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	same := replay("testguests/reloadv1")
	if len(same.Calls) != 3 || same.Changed() != 0 {
		t.Fatalf("replay against the recorded module: %d calls, %d changed: %+v", len(same.Calls), same.Changed(), same.Calls)
	}
	changed := replay("testguests/replaychanged")
	var got []string
	for _, c := range changed.Calls {
		for _, ch := range c.Changes {
			got = append(got, c.Call+": "+ch.What+" "+ch.Recorded+" -> "+ch.Replayed)
		}
	}
	want := `create_fn (create) kopfexamples default/gold: patch {"metadata":{"annotations":{"create-runs":"1"}}} -> {"metadata":{"annotations":{"create-runs":"1","tier-checked":"yes"}}}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("replay against replaychanged: %q\nwant exactly %q", got, want)
	}
}
