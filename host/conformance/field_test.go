package conformance_test

import "fmt"

// wantField asserts the old and new values (JSON) a field handler saw.
func (s *S) wantField(name, handler, reason string, old, new string) {
	s.Helper()
	c := s.callOf(name, handler, reason, 0)
	if c.old != old || c.new != new {
		s.Errorf("%s (%s) saw old %s new %s, want old %s new %s", handler, reason, c.old, c.new, old, new)
	}
}

func fieldScenarios() []scenario {
	const field, gone = "field_fn/spec.field", "field_gone_fn/spec.field"
	return []scenario{{
		name: "field/called-on-create-when-present",
		pins: "A field handler fires on the creation when its field is set: old absent (null), new the value; " +
			"a field handler filtered on new=ABSENT does not.",
		ref: "kopf.md §1.1 (on.field), §1.3, §1.5",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil, "field", "a")})
			s.quiet()
			s.wantCalls("x", "create_fn create 0", field+" create 0")
			s.wantField("x", field, "create", "null", `"a"`)
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), field: result("create", 0)})
		},
	}, {
		name: "field/not-called-when-absent",
		pins: "A field handler does not fire when its field is absent and stays absent (creation, then an " +
			"unrelated update).",
		ref: "kopf.md §1.3 (field_needs_change)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0")
		},
	}, {
		name: "field/called-on-change",
		pins: "A field handler fires on an update that changes its field, with the old and new values at the " +
			"field, beside the update handler.",
		ref: "kopf.md §1.1, §1.5 (old/new/diff reduced to the field)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil, "field", "a")})
			s.patch("x", `{"spec":{"field":"b"}}`)
			s.waitCall("x", field, "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", field+" create 0", field+" update 0", "update_fn update 0")
			s.wantField("x", field, "update", `"a"`, `"b"`)
			s.wantWrites("x", w(0, 2))
		},
	}, {
		name: "field/called-on-removal",
		pins: "Removing the field fires its field handlers with new absent (null), including the one filtered " +
			"on new=ABSENT.",
		ref: "kopf.md §1.1, §1.3 (value/old/new: PRESENT, ABSENT)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil, "field", "a")})
			s.patch("x", `{"spec":{"field":null}}`)
			s.waitCall("x", gone, "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", field+" create 0", field+" update 0", gone+" update 0", "update_fn update 0")
			s.wantField("x", field, "update", `"a"`, "null")
			s.wantField("x", gone, "update", `"a"`, "null")
		},
	}, {
		name: "field/called-when-added",
		pins: "Setting an absent field fires its field handler on the update with old absent (null); the " +
			"new=ABSENT one does not fire.",
		ref: "kopf.md §1.3",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			s.patch("x", `{"spec":{"field":"a"}}`)
			s.waitCall("x", field, "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", field+" update 0", "update_fn update 0")
			s.wantField("x", field, "update", "null", `"a"`)
		},
	}, {
		name: "field/not-called-on-unrelated-change",
		pins: "An update that leaves the field alone does not fire its field handler.",
		ref:  "kopf.md §1.3 (field_needs_change)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil, "field", "a")})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", field+" create 0", "update_fn update 0")
		},
	}, {
		name: "field/labels-field-handler",
		pins: "A field handler on metadata.labels fires on the creation (labels set) and on a label change, " +
			"with the label maps as old and new.",
		ref: "kopf.md §1.1, §1.5",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{labels: map[string]string{"a": "1"}, annotations: on("labels-fn"), spec: specOf(nil)})
			s.patch("x", `{"metadata":{"labels":{"a":"2"}}}`)
			s.waitCall("x", "labels_fn/metadata.labels", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "labels_fn/metadata.labels create 0",
				"labels_fn/metadata.labels update 0", "update_fn update 0")
			s.wantField("x", "labels_fn/metadata.labels", "create", "null", `{"a":"1"}`)
			s.wantField("x", "labels_fn/metadata.labels", "update", `{"a":"1"}`, `{"a":"2"}`)
		},
	}, {
		name: "field/retry-continues-through-unrelated-update",
		pins: "A field handler retrying on an update continues through a later unrelated change (the field still " +
			"differs from the diff-base): its retries go on, the update handler that already succeeded is not " +
			"called again, and the cause ends once.",
		ref:       "kopf.md §1.4, §2, §3.2",
		departure: departureNoTouch,
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(map[string]behaviour{"field_fn": temporary(2, 2.5)})})
			s.patch("x", `{"spec":{"field":"a"}}`)
			s.waitRecord("x", field, record{Purpose: "update", Retries: 1, Delayed: true})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", field+" update 0", field+" update 1", field+" update 2")
			if c := s.callOf("x", field, "update", 1); c.step != "2" {
				s.Errorf("the retry after the unrelated change saw step %s, want 2", c.step)
			}
			s.wantProgressWrites("x", field, "update/1+delayed", "update/2+delayed", "purged")
			s.wantProgressWrites("x", "update_fn", "update/1+success", "purged")
			s.wantLog("x", "Updating is processed: 2 succeeded; 0 failed.", 1)
			s.wantWrites("x", w(3, 3))
		},
	}}
}

func filterScenarios() []scenario {
	return []scenario{{
		name: "filter/create-handler-stops-matching-mid-retry",
		pins: "A label-filtered create handler that is retrying when its label changes no longer matches: it is " +
			"not called again, and the creation ends with the handlers that match (its record purged).",
		ref: "kopf.md §1.3, §1.4",
		run: func(s *S) {
			s.start()
			s.create("x", obj{labels: map[string]string{"match": "yes"}, spec: specOf(map[string]behaviour{"matched_create_fn": forever()})})
			s.waitRecord("x", "matched_create_fn", record{Purpose: "create", Retries: 1, Delayed: true})
			s.patch("x", `{"metadata":{"labels":{"match":"no"}}}`)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "matched_create_fn create 0")
			s.wantProgressWrites("x", "matched_create_fn", "create/1+delayed", "purged")
			s.wantProgressWrites("x", "create_fn", "create/1+success", "purged")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0)})
			s.wantLog("x", "Creation is processed: 1 succeeded; 0 failed.", 1)
			s.wantWrites("x", w(2, 2))
		},
	}, {
		name: "filter/update-handler-stops-matching-mid-retry",
		pins: "A label-filtered update handler that is retrying when its label is changed no longer matches: it " +
			"is not called again; the label change joins the running update, whose succeeded handler is not " +
			"called again, and the update ends.",
		ref: "kopf.md §1.3, §1.4",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{labels: map[string]string{"match": "yes"}, spec: specOf(map[string]behaviour{"matched_update_fn": forever()})})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitRecord("x", "matched_update_fn", record{Purpose: "update", Retries: 1, Delayed: true})
			s.patch("x", `{"metadata":{"labels":{"match":"no"}}}`)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "matched_create_fn create 0", "update_fn update 0", "matched_update_fn update 0")
			s.wantProgressWrites("x", "matched_update_fn", "update/1+delayed", "purged")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0),
				"matched_create_fn": result("create", 0), "update_fn": result("update", 0)})
			s.wantWrites("x", w(2, 3))
		},
	}, {
		name: "filter/handler-starts-matching-on-update",
		pins: "Adding the label a filtered update handler wants is an update that it matches: it is called; " +
			"the filtered create handler is not (it is no creation).",
		ref: "kopf.md §1.3",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			s.patch("x", `{"metadata":{"labels":{"match":"yes"}}}`)
			s.waitCall("x", "matched_update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "matched_update_fn update 0")
		},
	}}
}

func errorScenarios() []scenario {
	// limit runs a create handler switched on by feature that fails as
	// behave says, beside create_fn, and expects it called at the retries
	// and failed (or, with ok, succeeded without a result).
	limit := func(feature, id string, behave behaviour, retries []int, ok bool) func(s *S) {
		return func(s *S) {
			s.start()
			s.create("x", obj{annotations: on(feature), spec: specOf(map[string]behaviour{id: behave})})
			s.waitHandled("x")
			s.quiet()
			calls := []string{"create_fn create 0"}
			for _, r := range retries {
				calls = append(calls, fmt.Sprintf("%s create %d", id, r))
			}
			s.wantCalls("x", calls...)
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0)})
			if ok {
				s.wantLog("x", "Creation is processed: 2 succeeded; 0 failed.", 1)
			} else {
				s.wantLog("x", "Creation is processed: 1 succeeded; 1 failed.", 1)
			}
			progress := []string{}
			patches := 0
			if len(retries) > 1 {
				progress = append(progress, "create/1+delayed", "purged")
				patches = 2
				s.wantProgressWrites("x", "create_fn", "create/1+success", "purged")
			}
			s.wantProgressWrites("x", id, progress...)
			status := 1
			if patches > 0 {
				status = 2
			}
			s.wantWrites("x", w(patches, status))
		}
	}
	return []scenario{{
		name: "errors/retries-limit-fails-the-handler",
		pins: "With retries=2, a handler that keeps failing temporarily is called twice and then fails " +
			"(HandlerRetriesError, checked ahead of the next attempt); the creation ends with 1 failed.",
		ref: "kopf.md §1.1 (E options), §2 (Limits)",
		run: limit("limited", "limited_fn", temporary(0, 0.3), []int{0, 1}, false),
	}, {
		name: "errors/timeout-fails-the-handler",
		pins: "With timeout=2s and TemporaryError(delay=1.2), the second attempt fails the handler ahead of time " +
			"(HandlerTimeoutError: the next attempt would pass the timeout).",
		ref: "kopf.md §1.1 (E options), §2 (Limits)",
		run: limit("timeout", "timeout_fn", temporary(0, 1.2), []int{0, 1}, false),
	}, {
		name: "errors/ignored-mode-counts-as-success",
		pins: "With errors=IGNORED, an arbitrary error counts as success: called once, no result, not retried.",
		ref:  "kopf.md §1.1 (ErrorsMode), §2",
		run:  limit("ignored", "ignored_fn", arbitrary(0), []int{0}, true),
	}, {
		name: "errors/permanent-mode-fails-at-once",
		pins: "With errors=PERMANENT, an arbitrary error fails the handler for good: called once, no result.",
		ref:  "kopf.md §1.1 (ErrorsMode), §2",
		run:  limit("strict", "strict_fn", arbitrary(0), []int{0}, false),
	}}
}

func finalizerScenarios() []scenario {
	return []scenario{{
		name: "finalizer/added-when-a-delete-handler-starts-matching",
		pins: "When a change makes a (non-optional) delete handler match, the finalizer is added first, in a " +
			"cycle of its own, and the update handlers run in the next cycle (seeing it).",
		ref: "kopf.md §1.1 (on.delete: finaliser), §3.8 (+1 PATCH in a separate cycle)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			s.patch("x", `{"metadata":{"annotations":{"conf/delete-required":"yes"}}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0")
			if !s.callOf("x", "update_fn", "update", 0).finalized {
				s.Error("update_fn ran before the finalizer was added")
			}
			s.wantState("x", true, map[string]string{"create_fn": result("create", 0), "update_fn": result("update", 0)})
			s.wantWrites("x", w(1, 2))
		},
	}, {
		name: "finalizer/released-when-no-longer-needed",
		pins: "When a change makes the object need no finalizer any more (its delete handler no longer " +
			"matches), the finalizer is removed; a later deletion is immediate and calls no delete handler.",
		ref: "kopf.md §1.1 (on.delete: finaliser), §3.1",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("delete-required"), spec: specOf(nil)})
			s.patch("x", `{"metadata":{"annotations":{"conf/delete-required":null}}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "update_fn": result("update", 0)})
			s.del("x")
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0")
			s.wantWrites("x", w(2, 2))
		},
	}}
}
