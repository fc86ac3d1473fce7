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
		{"forced adopt overwrites", Object{"metadata": map[string]any{"name": "kid", "namespace": "ns2", "labels": map[string]any{"app": "kid"}}},
			func(c Object) { Adopt(c, owner(), Forced()) },
			`{"metadata":{"generateName":"parent-","labels":{"app":"demo","tier":"db"},"namespace":"ns1","ownerReferences":[` + ownerRef + `]}}`},
		{"strict adopt names the child", Object{}, func(c Object) { Adopt(c, owner(), Strict()) },
			`{"metadata":{"labels":{"app":"demo","tier":"db"},"name":"parent","namespace":"ns1","ownerReferences":[` + ownerRef + `]}}`},
		{"strict keeps a generateName unless forced", Object{"metadata": map[string]any{"generateName": "x-"}},
			func(c Object) { Harmonize(c, "parent", Strict()) }, `{"metadata":{"generateName":"x-"}}`},
		{"strict and forced", Object{"metadata": map[string]any{"generateName": "x-"}},
			func(c Object) { Harmonize(c, "parent", Strict(), Forced()) }, `{"metadata":{"name":"parent"}}`},
		{"label nested templates that exist", Object{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}},
			func(c Object) {
				Label(c, map[string]string{"a": "b"}, Nested("spec.template", "spec.jobTemplate.spec.template"))
			},
			`{"metadata":{"labels":{"a":"b"}},"spec":{"template":{"metadata":{"labels":{"a":"b"}},"spec":{}}}}`},
		{"label forced", Object{"metadata": map[string]any{"labels": map[string]any{"a": "old"}}},
			func(c Object) { Label(c, map[string]string{"a": "new"}, Forced()) }, `{"metadata":{"labels":{"a":"new"}}}`},
		{"namespace forced", Object{"metadata": map[string]any{"namespace": "x"}},
			func(c Object) { AdjustNamespace(c, "y", Forced()) }, `{"metadata":{"namespace":"y"}}`},
		{"owner reference, not a controller", Object{}, func(c Object) { AppendOwnerReference(c, owner(), Controller(false), BlockOwnerDeletion(false)) },
			`{"metadata":{"ownerReferences":[{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":false,"controller":false,"kind":"KopfExample","name":"parent","uid":"u1"}]}}`},
		{"remove the owner reference", Object{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"uid": "u0"}, map[string]any{"uid": "u1"}}}},
			func(c Object) { RemoveOwnerReference(c, owner()) }, `{"metadata":{"ownerReferences":[{"uid":"u0"}]}}`},
		{"remove the last owner reference", Object{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"uid": "u1"}}}},
			func(c Object) { RemoveOwnerReference(c, owner()) }, `{"metadata":{"ownerReferences":[]}}`},
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

func TestBuildObjectReference(t *testing.T) {
	if got, want := jsonString(t, BuildObjectReference(owner())),
		`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","name":"parent","namespace":"ns1","uid":"u1"}`; got != want {
		t.Errorf("reference = %s, want %s", got, want)
	}
	cluster := Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n", "uid": "u"}}
	if got, want := jsonString(t, BuildObjectReference(cluster)), `{"apiVersion":"v1","kind":"Namespace","name":"n","uid":"u"}`; got != want {
		t.Errorf("cluster-scoped reference = %s, want %s", got, want)
	}
}
