package kopf

import "testing"

func TestPatch(t *testing.T) {
	tests := []struct {
		name  string
		build func(p *Patch)
		want  string
	}{
		{"empty", func(*Patch) {}, `null`},
		{"set nested", func(p *Patch) { p.Set("metadata.labels.x", "y"); p.Set("spec.replicas", 3) },
			`{"merge":{"metadata":{"labels":{"x":"y"}},"spec":{"replicas":3}}}`},
		{"keys with dots", func(p *Patch) { p.SetKeys([]string{"metadata", "labels", "app.kubernetes.io/name"}, "x") },
			`{"merge":{"metadata":{"labels":{"app.kubernetes.io/name":"x"}}}}`},
		{"unset is null", func(p *Patch) { p.Unset("status.old") }, `{"merge":{"status":{"old":null}}}`},
		{"set over a scalar", func(p *Patch) { p.Set("spec", 1); p.Set("spec.x", 2) }, `{"merge":{"spec":{"x":2}}}`},
		{"merge deep", func(p *Patch) {
			p.Set("spec.a", 1)
			p.Merge(map[string]any{"spec": map[string]any{"b": 2}, "metadata": map[string]string{"name": "n"}})
		}, `{"merge":{"metadata":{"name":"n"},"spec":{"a":1,"b":2}}}`},
		{"json ops", func(p *Patch) {
			p.Add("/a/-", "x")
			p.Replace("/b", nil)
			p.Remove("/c")
			p.Test("/d", 1)
			p.Move("/e", "/f")
			p.Copy("/g", "/h")
		}, `{"json":[{"op":"add","path":"/a/-","value":"x"},{"op":"replace","path":"/b","value":null},{"op":"remove","path":"/c"},` +
			`{"op":"test","path":"/d","value":1},{"op":"move","path":"/f","from":"/e"},{"op":"copy","path":"/h","from":"/g"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Patch
			tt.build(&p)
			got, err := p.encode()
			if err != nil {
				t.Fatal(err)
			}
			if s := jsonString(t, got); s != tt.want {
				t.Errorf("patch = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestPatchThatCannotBeEncoded(t *testing.T) {
	var p Patch
	p.Add("/x", make(chan int))
	if _, err := p.encode(); err == nil {
		t.Fatal("no error for a value JSON cannot hold")
	}
}
