package execution_test

import (
	"fmt"
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// TestCycleInLogs: the cycle id of a subject is in the host's log
// attributes of the subject and in those its guests' records get.
func TestCycleInLogs(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "ns"}}}
	subj := execution.NewSubject(abi.ResourceRef{Version: "v1", Plural: "configmaps"}, false, obj)
	if got := fmt.Sprint(subj.Attrs()); got != "[object=[kind=ConfigMap namespace=ns name=x]]" {
		t.Errorf("without a cycle: %s", got)
	}
	subj.Cycle = "abc-7"
	if got := fmt.Sprint(subj.Attrs()); got != "[object=[kind=ConfigMap namespace=ns name=x] cycle=abc-7]" {
		t.Errorf("with a cycle: %s", got)
	}
	e := execution.New(execution.Options{Modules: func(string) execution.Module { return nil }, Cluster: &fakeCluster{}})
	la, ok := e.Host(subj).(wasmrt.LogAttrser)
	if !ok {
		t.Fatal("the guest host adds no log attributes")
	}
	if got := la.LogAttrs(); len(got) != 1 || !got[0].Equal(slog.String("cycle", "abc-7")) {
		t.Errorf("guest log attributes %v, want cycle=abc-7", got)
	}
}
