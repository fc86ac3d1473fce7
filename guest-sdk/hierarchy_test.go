package kopf

import "testing"

func owner() Object {
	return Object{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{
		"name": "parent", "namespace": "ns1", "uid": "u1", "labels": map[string]any{"app": "demo", "tier": "db"}}}
}

const ownerRef = `{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":true,"controller":true,"kind":"KopfExample","name":"parent","uid":"u1"}`

func TestHierarchies(t *testing.T) {
	tests := []struct {
		name  string
		child Object
		apply func(Object)
		want  string
	}{
		{"adopt a bare child", Object{"kind": "Pod"}, func(c Object) { Adopt(c, owner()) },
			`{"kind":"Pod","metadata":{"generateName":"parent-","labels":{"app":"demo","tier":"db"},"namespace":"ns1","ownerReferences":[` + ownerRef + `]}}`},
		{"adopt keeps what the child has", Object{"metadata": map[string]any{"name": "kid", "namespace": "ns2", "labels": map[string]string{"app": "kid"}}},
			func(c Object) { Adopt(c, owner()) },
			`{"metadata":{"labels":{"app":"kid","tier":"db"},"name":"kid","namespace":"ns2","ownerReferences":[` + ownerRef + `]}}`},
		{"owner reference is added once", Object{}, func(c Object) { AppendOwnerReference(c, owner()); AppendOwnerReference(c, owner()) },
			`{"metadata":{"ownerReferences":[` + ownerRef + `]}}`},
		{"owner reference beside others", Object{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"uid": "u0"}}}},
			func(c Object) { AppendOwnerReference(c, owner()) },
			`{"metadata":{"ownerReferences":[{"uid":"u0"},` + ownerRef + `]}}`},
		{"label", Object{}, func(c Object) { Label(c, map[string]string{"a": "b"}) }, `{"metadata":{"labels":{"a":"b"}}}`},
		{"label nothing", Object{}, func(c Object) { Label(c, nil) }, `{}`},
		{"harmonize keeps generateName", Object{"metadata": map[string]any{"generateName": "x-"}},
			func(c Object) { Harmonize(c, "parent") }, `{"metadata":{"generateName":"x-"}}`},
		{"namespace of a cluster-scoped owner", Object{}, func(c Object) { AdjustNamespace(c, "") }, `{"metadata":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.apply(tt.child)
			if got := jsonString(t, tt.child); got != tt.want {
				t.Errorf("child = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

func TestContextAdopt(t *testing.T) {
	fresh(t)
	OnCreate("kopf.dev", "v1", "kopfexamples", func(ctx *Context) (any, error) {
		child := Object{"kind": "Pod"}
		ctx.Adopt(child)
		return child, nil
	}, ID("c"))
	resp := run(t, &recorder{}, bodyRequest("c", jsonString(t, owner())))
	want := `{"kind":"Pod","metadata":{"generateName":"parent-","labels":{"app":"demo","tier":"db"},"namespace":"ns1","ownerReferences":[` + ownerRef + `]}}`
	if string(resp.Result) != want {
		t.Errorf("child = %s\nwant    %s", resp.Result, want)
	}
}
