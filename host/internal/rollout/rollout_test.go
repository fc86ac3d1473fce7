package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TestInCanary checks that the share splits objects evenly, and that a
// larger share only adds objects to the canary.
func TestInCanary(t *testing.T) {
	const n = 10000
	for _, percent := range []int{0, 10, 50, 90, 100} {
		in := 0
		for i := range n {
			uid := fmt.Sprintf("5f0c%04d-1b2e-4c3d-9e8f-%012d", i%7, i)
			if InCanary(uid, percent) {
				in++
				if !InCanary(uid, percent+10) {
					t.Fatalf("%s is in a %d%% canary but not in a %d%% one", uid, percent, percent+10)
				}
			}
		}
		if got, want := float64(in)/n*100, float64(percent); got < want-2 || got > want+2 {
			t.Errorf("share %d%%: %.1f%% of the objects in the canary", percent, got)
		}
	}
	if Bucket("abc") != Bucket("abc") {
		t.Error("the bucket is not stable")
	}
}

func TestCompare(t *testing.T) {
	ok := func(result, merge string) *abi.Response {
		r := &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(result)}
		if merge != "" {
			r.Patch = &abi.Patch{Merge: json.RawMessage(merge)}
		}
		return r
	}
	delay := 5.0
	tests := []struct {
		name       string
		a, b       *abi.Response
		aErr, bErr error
		want       []string
	}{
		{name: "equal, keys reordered", a: ok(`{"a":1,"b":2}`, `{"x":1}`), b: ok(`{"b":2,"a":1}`, `{"x":1}`)},
		{name: "result", a: ok(`{"v":"v1"}`, ""), b: ok(`{"v":"v2"}`, ""), want: []string{`result: {"v":"v1"} -> {"v":"v2"}`}},
		{name: "patch added", a: ok(``, ""), b: ok(``, `{"x":1}`), want: []string{`patch: (none) -> {"x":1}`}},
		{name: "outcome", a: ok(``, ""), b: &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "later", Delay: &delay}},
			want: []string{"outcome: success -> temporary (later) retry in 5s"}},
		{name: "shadow failed", a: ok(``, ""), bErr: errors.New("trap"), want: []string{"error: (none) -> trap"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Compare(tc.a, tc.aErr, tc.b, tc.bErr)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Compare = %q, want %q", got, tc.want)
			}
		})
	}
}
