package execution_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// refCluster records the objects Events are about.
type refCluster struct {
	fakeCluster
	about []kube.ObjectRef
}

func (c *refCluster) PostEvent(ctx context.Context, about kube.ObjectRef, ev abi.EventRequest) error {
	c.about = append(c.about, about)
	return c.fakeCluster.PostEvent(ctx, about, ev)
}

// A guest's Event goes to the handled object, or to the object it names
// (Kopf's kopf.event(objs, ...)), also from an activity; a named object
// without kind or name is refused with a 400.
func TestGuestEventsAboutObjects(t *testing.T) {
	other := &abi.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "ns2", Name: "p", UID: "u2"}
	tests := []struct {
		name    string
		subject bool
		about   *abi.ObjectReference
		want    kube.ObjectRef
		code    int // of the refusal; 0 when posted
	}{
		{name: "the handled object", subject: true, want: kube.ObjectRef{APIVersion: "kopf.dev/v1", Kind: "KopfExample", Namespace: "ns", Name: "ex", UID: "u1"}},
		{name: "another object", subject: true, about: other, want: kube.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "ns2", Name: "p", UID: "u2"}},
		{name: "from an activity", about: other, want: kube.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "ns2", Name: "p", UID: "u2"}},
		{name: "an activity without an object", code: 500},
		{name: "no kind", subject: true, about: &abi.ObjectReference{APIVersion: "v1", Name: "p"}, code: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := &refCluster{}
			exec := execution.New(execution.Options{Modules: func(string) execution.Module { return nil }, Cluster: cluster, Settings: settings.Default()})
			var subj *execution.Subject
			if tt.subject {
				subj = execution.NewSubject(ref, true, object())
			}
			err := exec.Host(subj).PostEvent(context.Background(), abi.EventRequest{Type: abi.EventError, Reason: "Boom", Message: "m", About: tt.about})
			if tt.code != 0 {
				var herr *abi.HostError
				code := 500
				if errors.As(err, &herr) {
					code = herr.Code
				}
				if err == nil || code != tt.code || len(cluster.about) != 0 {
					t.Fatalf("err = %v (code %d), posted %v; want a %d refusal", err, code, cluster.about, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cluster.about) != 1 || cluster.about[0] != tt.want {
				t.Errorf("posted about %+v, want %+v", cluster.about, tt.want)
			}
		})
	}
}
