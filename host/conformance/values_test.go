package conformance_test

import "fmt"

// valueFilterScenarios pin Kopf's value=, old= and callable filters on
// the API server (their semantics are unit-tested in the registry and the
// SDK; here the whole path runs: manifest, the host's filters, the guest's
// callbacks, the writes).
func valueFilterScenarios() []scenario {
	return []scenario{{
		name: "filter-values/value-matches-old-or-new",
		pins: "An update handler with field=spec.flag and value=\"on\" is called when the field changes and its old " +
			"or its new value is \"on\" (set to on, then from on to another value), not when neither is, nor when " +
			"another field changes while the field stays on.",
		ref: "kopf.md §1.3 (changing handlers check value against old or new; field_needs_change)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("value"), spec: specOf(nil, "flag", "off")})
			for i, doc := range []string{`{"spec":{"flag":"on"}}`, `{"spec":{"step":2}}`, `{"spec":{"flag":"x"}}`, `{"spec":{"flag":"y"}}`} {
				s.patch("x", doc)
				s.waitHandled("x")
				s.waitUpdates("x", i+1)
			}
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "update_fn update 0", "update_fn update 0",
				"update_fn update 0", "value_fn/spec.flag update 0", "value_fn/spec.flag update 0")
			s.wantFieldCalls("x", "value_fn/spec.flag", `"off"->"on"`, `"on"->"x"`)
		},
	}, {
		name: "filter-values/old-matches-the-old-value",
		pins: "A field handler with old=\"on\" is called only for a change away from \"on\": not on the creation " +
			"(no old value), not for a change to \"on\".",
		ref: "kopf.md §1.3 (old=/new= are checked separately)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("old"), spec: specOf(nil, "flag", "on")})
			for i, doc := range []string{`{"spec":{"flag":"off"}}`, `{"spec":{"flag":"on"}}`} {
				s.patch("x", doc)
				s.waitHandled("x")
				s.waitUpdates("x", i+1)
			}
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "update_fn update 0", "old_fn/spec.flag update 0")
			s.wantFieldCalls("x", "old_fn/spec.flag", `"on"->"off"`)
		},
	}, {
		name: "filter-values/annotation-callable",
		pins: "An update handler whose annotation filter is a function (conf/callable must be \"go\") is called " +
			"only while the function says yes: the host asks the guest before each call, and a handler it " +
			"filters out gets no call, no record and no result.",
		ref: "kopf.md §1.1 (labels/annotations: callable), §1.3",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: map[string]string{"conf/callable-annotation": "yes", "conf/callable": "wait"}, spec: specOf(nil)})
			for i, doc := range []string{`{"spec":{"step":2}}`, `{"metadata":{"annotations":{"conf/callable":"go"}}}`, `{"spec":{"step":3}}`} {
				s.patch("x", doc)
				s.waitHandled("x")
				s.waitUpdates("x", i+1)
			}
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "update_fn update 0", "update_fn update 0",
				"callable_annotation_fn update 0", "callable_annotation_fn update 0")
			s.wantProgressWrites("x", "callable_annotation_fn")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0),
				"update_fn": result("update", 0), "callable_annotation_fn": result("update", 0)})
		},
	}, {
		name: "filter-values/value-callable-and-combinator",
		pins: "A field handler whose value filter is a function (the value starts with \"big\") is called when " +
			"the old or the new value passes it (a change to big-1, then from big-1 to tiny), not otherwise; its " +
			"when filter kopf.Not(named skip), a combinator, keeps it from the object named skip.",
		ref: "kopf.md §1.1 (value: callable; filter combinators), §1.3",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("callable-value"), spec: specOf(nil, "flag", "small")})
			s.createHandled("skip", obj{annotations: on("callable-value"), spec: specOf(nil, "flag", "big-0")})
			for i, doc := range []string{`{"spec":{"flag":"big-1"}}`, `{"spec":{"flag":"tiny"}}`, `{"spec":{"flag":"tinier"}}`} {
				for _, name := range []string{"x", "skip"} {
					s.patch(name, doc)
					s.waitHandled(name)
					s.waitUpdates(name, i+1)
				}
			}
			s.quiet()
			s.wantFieldCalls("x", "callable_value_fn/spec.flag", `"small"->"big-1"`, `"big-1"->"tiny"`)
			s.wantFieldCalls("skip", "callable_value_fn/spec.flag")
		},
	}, {
		name: "filter-values/callable-resource-selector",
		pins: "A create handler whose resources a function chooses (Kopf's callable selector fn(resource) -> bool; " +
			"here the kind KopfExample among the kopf.dev group's resources) serves the resource it chose: a new " +
			"kopfexample gets its call beside the handlers that name the resource, and nothing is left unserved.",
		ref: "kopf.md §1.2 (a single callable fn(resource: kopf.Resource) -> bool, combined with keyword selectors)",
		departure: "The module is asked once at start and again whenever discovery changes (a CRD came or went), " +
			"with the resources the cluster serves as a JSON list (Kopf's kopf.Resource fields; subresources: " +
			"status only); Kopf calls its callable in process whenever it scans the cluster.",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("selected"), spec: specOf(nil)})
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "selected_fn create 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "selected_fn": result("create", 0)})
			s.wantLog("", "callable selector", 0)
		},
	}}
}

// waitUpdates waits until update_fn has been called n times for the
// object: its n-th update is handled.
func (s *S) waitUpdates(name string, n int) {
	s.Helper()
	s.waitFor(fmt.Sprintf("%s's update %d", name, n), func() error {
		got := 0
		for _, c := range s.calls(name) {
			if c.handler == "update_fn" {
				got++
			}
		}
		if got < n {
			return fmt.Errorf("%d updates handled", got)
		}
		return nil
	})
}

// wantFieldCalls asserts the old and new values (JSON, "old->new") that a
// field-filtered handler was called with, in order.
func (s *S) wantFieldCalls(name, id string, want ...string) {
	s.Helper()
	var got []string
	for _, c := range s.calls(name) {
		if c.handler == id {
			got = append(got, c.old+"->"+c.new)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		s.Errorf("calls of %s on %s:\n got  %v\n want %v", id, name, got, want)
	}
}
