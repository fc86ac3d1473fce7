package abi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// VersionError says that a module speaks another major ABI version.
type VersionError struct {
	Module string
	Got    int
}

func (e *VersionError) Error() string {
	if e.Got > Version {
		return fmt.Sprintf("module %q is built for ABI v%d, but this host speaks v%d: upgrade kopf-wasm, or rebuild the module with a guest SDK for ABI v%d", e.Module, e.Got, Version, Version)
	}
	return fmt.Sprintf("module %q is built for ABI v%d, but this host speaks v%d: rebuild the module with a guest SDK for ABI v%d", e.Module, e.Got, Version, Version)
}

// ManifestError lists what is wrong with a manifest.
type ManifestError struct {
	Module   string
	Problems []string
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("module %q has an invalid manifest: %s; fix the handler registrations and rebuild", e.Module, strings.Join(e.Problems, "; "))
}

// Validate checks the manifest against this version of the ABI. It returns a
// *VersionError for another ABI version and a *ManifestError for anything
// else, or nil.
func (m *Manifest) Validate() error {
	if m.ABIVersion != Version {
		return &VersionError{Module: m.Module.Name, Got: m.ABIVersion}
	}
	var p problems
	if m.Module.Name == "" {
		p.add("module.name is empty")
	}
	seen := map[string][]HandlerSpec{}
	for i, h := range m.Handlers {
		where := fmt.Sprintf("handler[%d]", i)
		if h.ID != "" {
			where = fmt.Sprintf("handler %q", h.ID)
		}
		if h.ID == "" {
			p.add("%s has no id", where)
		} else if problem := sharedID(h, seen[h.ID]); problem != "" {
			p.add("%s %s", where, problem)
		}
		seen[h.ID] = append(seen[h.ID], h)
		h.validate(where, &p)
	}
	for i, perm := range m.Permissions.Kubernetes {
		perm.validate(fmt.Sprintf("permission[%d]", i), &p)
	}
	if len(p) > 0 {
		return &ManifestError{Module: m.Module.Name, Problems: p}
	}
	return nil
}

// sharedID says what is wrong with declaring h under an id already
// declared by the specs before, or "" when nothing is. As Kopf lets one
// function carry several of its decorators, an id may repeat:
//
//   - across create, update, delete, resume and field handlers, once per
//     kind (@kopf.on.resume with @kopf.on.create, the pattern Kopf's
//     documentation shows): the entries are one function with one
//     progress record, run at most once per cause (the first due entry in
//     manifest order), as Kopf deduplicates a cause's handlers by function
//     and id; the guest tells the entries apart by [Request.Kind];
//   - under one changing or event kind, for other resources (Kopf's
//     @kopf.on.update('pods') over @kopf.on.update('services') on one
//     function): the host serves each resource with the entry that names
//     it. The guest cannot tell such entries apart (a request names the id
//     and the kind), so they must be the same function with the same
//     filters and options; only the param, which the request carries,
//     may differ.
//
// Other kinds key state by id alone (a daemon, an index, a webhook's path)
// and never repeat one.
func sharedID(h HandlerSpec, before []HandlerSpec) string {
	if len(before) == 0 {
		return ""
	}
	sameKind := false
	for _, b := range before {
		if b.Kind != h.Kind {
			continue
		}
		if problem := sameKindTwice(h, b); problem != "" {
			return problem
		}
		sameKind = true
	}
	if sameKind {
		return ""
	}
	if !h.Kind.IsChanging() || !before[0].Kind.IsChanging() {
		return "is declared twice (only create, update, delete, resume and field handlers share an id)"
	}
	return ""
}

// sameKindTwice says what is wrong with h declared again as b's kind.
func sameKindTwice(h, b HandlerSpec) string {
	twice := fmt.Sprintf("is declared twice as a %s handler: give one of them an id of its own, or join their filters in one registration", h.Kind)
	if !h.Kind.IsChanging() && h.Kind != KindEvent {
		return twice
	}
	if h.Resource == nil || b.Resource == nil || *h.Resource == *b.Resource {
		return twice
	}
	ho, bo := h.Options, b.Options
	ho.Param, bo.Param = nil, nil
	if !sameJSON(h.Filters, b.Filters) || !sameJSON(ho, bo) {
		return fmt.Sprintf("is declared twice as a %s handler with other filters or options: one function under "+
			"several resources of one kind must have the same filters and options (param may differ); give one of them an id of its own", h.Kind)
	}
	return ""
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (h *HandlerSpec) validate(where string, p *problems) {
	if !knownKind(h.Kind) {
		p.add("%s has an unknown kind %q", where, h.Kind)
		return
	}
	switch {
	case h.Kind.IsActivity() && h.Resource != nil:
		p.add("%s is a %s handler and takes no resource", where, h.Kind)
	case !h.Kind.IsActivity() && (h.Resource == nil || countSet(h.Resource.Name != "", h.Resource.Category != "", h.Resource.Everything, h.Resource.Callback) == 0):
		p.add("%s has no resource", where)
	case !h.Kind.IsActivity() && countSet(h.Resource.Name != "", h.Resource.Category != "", h.Resource.Everything, h.Resource.Callback) > 1:
		p.add("%s must name one of its resource, a category or everything, or select with a callback", where)
	case h.Kind == KindConvert && h.Resource.Many():
		p.add("%s is a convert handler; it must name its custom resource", where)
	case h.Kind == KindConvert && h.Resource.Group == "":
		p.add("%s is a convert handler of a core resource; only custom resources convert", where)
	}
	if h.Options.InitialDelayCallback && h.Kind != KindTimer && h.Kind != KindDaemon {
		p.add("%s is a %s handler; only timers and daemons have an initial delay", where, h.Kind)
	}
	if h.Options.InitialDelayCallback && h.Options.InitialDelay > 0 {
		p.add("%s sets both initialDelay and initialDelayCallback; keep one", where)
	}
	if len(h.Options.Versions) > 0 && h.Kind != KindConvert {
		p.add("%s is a %s handler; only convert handlers declare versions", where, h.Kind)
	}
	h.Filters.validate(where, h.Kind, p)
	h.Options.validate(where, p)
}

func (f *Filters) validate(where string, kind HandlerKind, p *problems) {
	if kind == KindField && f.Field == "" {
		p.add("%s is a field handler without a field", where)
	}
	if f.Field == "" && (f.Value != nil || f.Old != nil || f.New != nil) {
		p.add("%s filters on value/old/new without a field", where)
	}
	if f.Value != nil && (f.Old != nil || f.New != nil) {
		p.add("%s combines value with old/new", where)
	}
	for i, v := range []*ValueFilter{f.Value, f.Old, f.New} {
		if v != nil && countSet(len(v.Value) > 0, v.Present, v.Absent, v.Callback) != 1 {
			p.add("%s: the %s filter must set exactly one of value, present, absent, callback", where, [...]string{"value", "old", "new"}[i])
		}
		if v != nil && v.Callback && !f.When {
			p.add("%s: the %s filter is a callback, which needs when", where, [...]string{"value", "old", "new"}[i])
		}
	}
	for _, meta := range []struct {
		what    string
		filters map[string]MetaFilter
	}{{"label", f.Labels}, {"annotation", f.Annotations}} {
		what := meta.what
		for key, m := range meta.filters {
			if countSet(m.Value != nil, m.Present, m.Absent, m.Callback) != 1 {
				p.add("%s: the %s filter %q must set exactly one of value, present, absent, callback", where, what, key)
			}
			if m.Callback && !f.When {
				p.add("%s: the %s filter %q is a callback, which needs when", where, what, key)
			}
		}
	}
}

func (o *Options) validate(where string, p *problems) {
	switch o.Errors {
	case "", ErrorsIgnored, ErrorsTemporary, ErrorsPermanent:
	default:
		p.add("%s has an unknown errors mode %q", where, o.Errors)
	}
	durations := []struct {
		name  string
		value float64
	}{
		{"timeout", o.Timeout}, {"backoff", o.Backoff}, {"interval", o.Interval},
		{"initialDelay", o.InitialDelay}, {"idle", o.Idle}, {"cancellationBackoff", o.CancellationBackoff},
		{"cancellationTimeout", o.CancellationTimeout}, {"cancellationPolling", o.CancellationPolling},
	}
	for _, d := range durations {
		if d.value < 0 {
			p.add("%s has a negative %s", where, d.name)
		}
	}
	if o.Retries < 0 {
		p.add("%s has negative retries", where)
	}
	for _, v := range o.Versions {
		if v == "" || strings.ContainsAny(v, "/ ") {
			p.add("%s declares the version %q; versions are bare names such as \"v1\"", where, v)
		}
	}
	for _, op := range o.Operations {
		switch op {
		case "CREATE", "UPDATE", "DELETE", "CONNECT", "*":
		default:
			p.add("%s has an unknown operation %q (CREATE, UPDATE, DELETE, CONNECT)", where, op)
		}
	}
}

func (k *KubePermission) validate(where string, p *problems) {
	if k.Resource == "" {
		p.add("%s has no resource", where)
	}
	if len(k.Verbs) == 0 {
		p.add("%s has no verbs", where)
	}
	for _, v := range k.Verbs {
		switch v {
		case "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*":
		default:
			p.add("%s has an unknown verb %q", where, v)
		}
	}
}

func knownKind(k HandlerKind) bool {
	for _, known := range Kinds() {
		if k == known {
			return true
		}
	}
	return false
}

func countSet(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}
