package conformance_test

import (
	"encoding/json"
	"fmt"
	"strings"
)

// behaviour is what one handler of the test module does (spec.behave.<key>).
type behaviour map[string]any

func succeed() behaviour { return behaviour{} }

// temporary fails with a TemporaryError of delay seconds while retry <
// until (always with until 0).
func temporary(until int, delay float64) behaviour {
	return behaviour{"fail": "temporary", "until": until, "delay": delay}
}

func permanent() behaviour { return behaviour{"fail": "permanent"} }

// arbitrary fails with an error that is not a kopf error while retry <
// until (always with until 0).
func arbitrary(until int) behaviour { return behaviour{"fail": "arbitrary", "until": until} }

// blocking succeeds after sleeping seconds.
func blocking(seconds float64) behaviour { return behaviour{"block": seconds} }

// forever is a temporary error with a long delay: the handler is retrying,
// and is not due again within the scenario.
func forever() behaviour { return temporary(0, 30) }

// specOf is an object's spec: step 1, the handlers' behaviours and extra
// fields (key, value pairs), as JSON-decoded values.
func specOf(behave map[string]behaviour, extra ...any) map[string]any {
	m := map[string]any{"step": 1}
	if len(behave) > 0 {
		m["behave"] = behave
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	raw, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// on is the annotations that switch on optional handlers of the test
// module (conf/<feature>).
func on(features ...string) map[string]string {
	m := map[string]string{}
	for _, f := range features {
		m["conf/"+f] = "yes"
	}
	return m
}

// w is a write summary: n merge patches of the object and m of its status.
func w(patches, status int) string {
	var parts []string
	if patches > 0 {
		parts = append(parts, fmt.Sprintf("patch=%d", patches))
	}
	if status > 0 {
		parts = append(parts, fmt.Sprintf("patch/status=%d", status))
	}
	return strings.Join(parts, " ")
}

// progressWrites lists what the host's writes did to the handler's
// progress annotation, in order: each stored record in short form
// ("create/1+delayed": purpose, retries, flags) or "purged".
func (s *S) progressWrites(name, id string) []string {
	key := prefix + strings.ReplaceAll(id, "/", ".")
	var out []string
	for _, ev := range s.suite.audit.events(s.ns, name) {
		var body struct {
			Metadata struct {
				Annotations map[string]*string `json:"annotations"`
			} `json:"metadata"`
		}
		if ev.ObjectRef.Subresource != "" || json.Unmarshal(ev.RequestObject, &body) != nil {
			continue
		}
		v, ok := body.Metadata.Annotations[key]
		switch {
		case !ok:
		case v == nil:
			out = append(out, "purged")
		default:
			out = append(out, shortRecord(*v))
		}
	}
	return out
}

func shortRecord(raw string) string {
	var r struct {
		Purpose          string
		Retries          int
		Success, Failure bool
		Delayed          *string
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return "corrupt: " + raw
	}
	out := fmt.Sprintf("%s/%d", r.Purpose, r.Retries)
	if r.Delayed != nil {
		out += "+delayed"
	}
	if r.Success {
		out += "+success"
	}
	if r.Failure {
		out += "+failure"
	}
	return out
}

// wantProgressWrites asserts the host's writes of one handler's progress
// record exactly (see progressWrites).
func (s *S) wantProgressWrites(name, id string, want ...string) {
	s.Helper()
	if got := s.progressWrites(name, id); fmt.Sprint(got) != fmt.Sprint(want) {
		s.Errorf("writes of %s's progress on %s:\n got  %v\n want %v", id, name, got, want)
	}
}

// wantProgressWritesOneOf is wantProgressWrites with alternatives.
func (s *S) wantProgressWritesOneOf(name, id string, alternatives ...[]string) {
	s.Helper()
	got := fmt.Sprint(s.progressWrites(name, id))
	var want []string
	for _, alt := range alternatives {
		if fmt.Sprint(alt) == got {
			return
		}
		want = append(want, fmt.Sprint(alt))
	}
	s.Errorf("writes of %s's progress on %s:\n got  %s\n want one of %s", id, name, got, strings.Join(want, " "))
}

// firstWrite is the request body of the host's first write to the object.
func (s *S) firstWrite(name string) string {
	evs := s.suite.audit.events(s.ns, name)
	if len(evs) == 0 {
		return ""
	}
	return string(evs[0].RequestObject)
}

// eventWrites counts the Kubernetes Events the host posted in the
// scenario's namespace.
func (s *S) eventWrites() int {
	n := 0
	for _, ev := range s.suite.audit.events(s.ns, "") {
		if ev.ObjectRef.Resource == "events" {
			n++
		}
	}
	return n
}

// wantEvents asserts how many Events the host posted in the namespace.
func (s *S) wantEvents(n int) {
	s.Helper()
	if got := s.eventWrites(); got != n {
		s.Errorf("the host posted %d Events, want %d", got, n)
	}
}

// createHandled creates the object and waits until its creation is
// handled.
func (s *S) createHandled(name string, o obj) {
	s.Helper()
	s.create(name, o)
	s.waitHandled(name)
}
