package abi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	res := &ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	valid := func(h ...HandlerSpec) *Manifest {
		return &Manifest{ABIVersion: Version, Module: ModuleInfo{Name: "m"}, Handlers: h}
	}
	tests := []struct {
		name     string
		manifest *Manifest
		want     string // a substring of the error; empty for valid
	}{
		{"valid", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res}), ""},
		{"newer abi", &Manifest{ABIVersion: 2, Module: ModuleInfo{Name: "m"}}, "upgrade kopf-wasm"},
		{"older abi", &Manifest{ABIVersion: 0, Module: ModuleInfo{Name: "m"}}, "rebuild the module with a guest SDK for ABI v1"},
		{"no module name", &Manifest{ABIVersion: Version}, "module.name is empty"},
		{"duplicate id", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res}, HandlerSpec{ID: "a", Kind: KindCreate, Resource: res}), `"a" is declared twice as a create handler`},
		{"one function for create, update and resume", valid(HandlerSpec{ID: "a", Kind: KindResume, Resource: res}, HandlerSpec{ID: "a", Kind: KindCreate, Resource: res}, HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res}), ""},
		{"one function for update and field", valid(HandlerSpec{ID: "a/spec.x", Kind: KindUpdate, Resource: res, Filters: Filters{Field: "spec.x"}}, HandlerSpec{ID: "a/spec.x", Kind: KindField, Resource: res, Filters: Filters{Field: "spec.x"}}), ""},
		{"a daemon's id on a create handler", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res}, HandlerSpec{ID: "a", Kind: KindDaemon, Resource: res}), `"a" is declared twice (only create, update, delete, resume and field handlers share an id)`},
		{"one function updating two resources", valid(HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res, Options: Options{Param: json.RawMessage(`1`)}}, HandlerSpec{ID: "a", Kind: KindUpdate, Resource: &ResourceSelector{Version: "v1", Name: "services"}, Options: Options{Param: json.RawMessage(`2`)}}), ""},
		{"one function on events of three resources", valid(HandlerSpec{ID: "a", Kind: KindEvent, Resource: res}, HandlerSpec{ID: "a", Kind: KindEvent, Resource: &ResourceSelector{Name: "services"}}, HandlerSpec{ID: "a", Kind: KindEvent, Resource: &ResourceSelector{Name: "secrets"}}), ""},
		{"one function for two resources, a third time for the first", valid(HandlerSpec{ID: "a", Kind: KindEvent, Resource: res}, HandlerSpec{ID: "a", Kind: KindEvent, Resource: &ResourceSelector{Name: "services"}}, HandlerSpec{ID: "a", Kind: KindEvent, Resource: res}), `"a" is declared twice as a event handler`},
		{"one id for two resources with other filters", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res}, HandlerSpec{ID: "a", Kind: KindCreate, Resource: &ResourceSelector{Name: "services"}, Filters: Filters{When: true}}), "must have the same filters and options"},
		{"one daemon for two resources", valid(HandlerSpec{ID: "a", Kind: KindDaemon, Resource: res}, HandlerSpec{ID: "a", Kind: KindDaemon, Resource: &ResourceSelector{Name: "services"}}), `"a" is declared twice as a daemon handler`},
		{"two daemons of one id", valid(HandlerSpec{ID: "a", Kind: KindDaemon, Resource: res}, HandlerSpec{ID: "a", Kind: KindDaemon, Resource: res}), `"a" is declared twice`},
		{"no id", valid(HandlerSpec{Kind: KindCreate, Resource: res}), "handler[0] has no id"},
		{"unknown kind", valid(HandlerSpec{ID: "a", Kind: "reconcile", Resource: res}), `unknown kind "reconcile"`},
		{"no resource", valid(HandlerSpec{ID: "a", Kind: KindCreate}), "has no resource"},
		{"activity with resource", valid(HandlerSpec{ID: "a", Kind: KindStartup, Resource: res}), "takes no resource"},
		{"field handler without field", valid(HandlerSpec{ID: "a", Kind: KindField, Resource: res}), "without a field"},
		{"value without field", valid(HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res, Filters: Filters{New: &ValueFilter{Present: true}}}), "without a field"},
		{"value with old", valid(HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res, Filters: Filters{Field: "spec.x", Value: &ValueFilter{Present: true}, Old: &ValueFilter{Absent: true}}}), "combines value with old/new"},
		{"ambiguous value filter", valid(HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res, Filters: Filters{Field: "spec.x", New: &ValueFilter{Present: true, Absent: true}}}), "the new filter must set exactly one"},
		{"empty label filter", valid(HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res, Filters: Filters{Labels: map[string]MetaFilter{"app": {}}}}), `label filter "app"`},
		{"bad errors mode", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res, Options: Options{Errors: "sometimes"}}), `unknown errors mode "sometimes"`},
		{"negative timeout", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res, Options: Options{Timeout: -1}}), "negative timeout"},
		{"bad operation", valid(HandlerSpec{ID: "a", Kind: KindValidate, Resource: res, Options: Options{Operations: []string{"PATCH"}}}), `unknown operation "PATCH"`},
		{"convert with versions", valid(HandlerSpec{ID: "a", Kind: KindConvert, Resource: res, Options: Options{Versions: []string{"v1alpha1", "v1"}}}), ""},
		{"versions on a validator", valid(HandlerSpec{ID: "a", Kind: KindValidate, Resource: res, Options: Options{Versions: []string{"v1"}}}), "only convert handlers declare versions"},
		{"qualified version", valid(HandlerSpec{ID: "a", Kind: KindConvert, Resource: res, Options: Options{Versions: []string{"kopf.dev/v1"}}}), `version "kopf.dev/v1"`},
		{"category", valid(HandlerSpec{ID: "a", Kind: KindEvent, Resource: &ResourceSelector{Category: "all"}}), ""},
		{"everything in a group", valid(HandlerSpec{ID: "a", Kind: KindEvent, Resource: &ResourceSelector{Group: "kopf.dev", Everything: true}}), ""},
		{"empty selector", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: &ResourceSelector{Group: "kopf.dev"}}), "has no resource"},
		{"name and category", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: &ResourceSelector{Name: "pods", Category: "all"}}), "must name one of its resource, a category or everything, or select with a callback"},
		{"convert of a category", valid(HandlerSpec{ID: "a", Kind: KindConvert, Resource: &ResourceSelector{Group: "kopf.dev", Category: "all"}}), "must name its custom resource"},
		{"callback label", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res, Filters: Filters{When: true, Labels: map[string]MetaFilter{"app": {Callback: true}}}}), ""},
		{"callback label without when", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res, Filters: Filters{Labels: map[string]MetaFilter{"app": {Callback: true}}}}), `label filter "app" is a callback, which needs when`},
		{"callback and value", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res, Filters: Filters{When: true, Annotations: map[string]MetaFilter{"a": {Callback: true, Present: true}}}}), `annotation filter "a" must set exactly one`},
		{"callback value without when", valid(HandlerSpec{ID: "a", Kind: KindUpdate, Resource: res, Filters: Filters{Field: "spec.x", Old: &ValueFilter{Callback: true}}}), "the old filter is a callback, which needs when"},
		{"callable selector", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: &ResourceSelector{Group: "kopf.dev", Callback: true}}), ""},
		{"callable selector and a name", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: &ResourceSelector{Name: "pods", Callback: true}}), "must name one of its resource, a category or everything, or select with a callback"},
		{"initial delay callback", valid(HandlerSpec{ID: "a", Kind: KindTimer, Resource: res, Options: Options{InitialDelayCallback: true}}), ""},
		{"initial delay callback on a create handler", valid(HandlerSpec{ID: "a", Kind: KindCreate, Resource: res, Options: Options{InitialDelayCallback: true}}), "only timers and daemons have an initial delay"},
		{"initial delay and its callback", valid(HandlerSpec{ID: "a", Kind: KindDaemon, Resource: res, Options: Options{InitialDelay: 1, InitialDelayCallback: true}}), "sets both initialDelay and initialDelayCallback"},
		{"bad verb", &Manifest{ABIVersion: Version, Module: ModuleInfo{Name: "m"}, Permissions: Permissions{Kubernetes: []KubePermission{{Resource: "pods", Verbs: []string{"steal"}}}}}, `unknown verb "steal"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.manifest.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error containing %q, got %v", tt.want, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error must be one line: %q", err)
			}
			var ve *VersionError
			var me *ManifestError
			if !errors.As(err, &ve) && !errors.As(err, &me) {
				t.Errorf("the error is neither a *VersionError nor a *ManifestError: %T", err)
			}
		})
	}
}

func TestKindClasses(t *testing.T) {
	for _, k := range Kinds() {
		classes := 0
		for _, is := range []bool{k.IsActivity(), k.IsChanging(), k.IsWebhook()} {
			if is {
				classes++
			}
		}
		if classes > 1 {
			t.Errorf("kind %s is in %d classes", k, classes)
		}
	}
	if len(Kinds()) != 15 {
		t.Errorf("ABI v1 has 15 handler kinds (14 of Kopf's and convert), Kinds() lists %d", len(Kinds()))
	}
}
