package sharding

import (
	"fmt"
	"testing"
	"time"

	testclock "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

func uids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("5f0c%04x-1b2e-4c3d-9e8f-%012x", i, i*7919)
	}
	return out
}

func TestViewSpreadsObjectsEvenly(t *testing.T) {
	for _, members := range [][]string{{"a"}, {"a", "b"}, {"r-1", "r-2", "r-3"}, {"p", "q", "r", "s", "t"}} {
		v := NewView(members)
		counts := map[string]int{}
		objs := uids(6000)
		for _, uid := range objs {
			counts[v.Owner(uid)]++
		}
		fair := len(objs) / len(members)
		for _, m := range members {
			if c := counts[m]; c < fair*8/10 || c > fair*12/10 {
				t.Errorf("%v: member %s owns %d of %d objects, want %d ± 20%%", members, m, c, len(objs), fair)
			}
		}
	}
}

func TestViewMovesOnlyTheJoinersAndLeaversObjects(t *testing.T) {
	before, after := NewView([]string{"a", "b", "c"}), NewView([]string{"a", "b", "c", "d"})
	moved := 0
	for _, uid := range uids(3000) {
		was, is := before.Owner(uid), after.Owner(uid)
		if was != is {
			moved++
			if is != "d" {
				t.Fatalf("object %s moved from %s to %s: only the joiner may take objects", uid, was, is)
			}
		}
	}
	if moved < 3000/4*8/10 || moved > 3000/4*12/10 {
		t.Errorf("%d of 3000 objects moved to the fourth member, want about a quarter", moved)
	}
	gone := NewView([]string{"a", "c"})
	for _, uid := range uids(3000) {
		if was, is := before.Owner(uid), gone.Owner(uid); was != "b" && was != is {
			t.Fatalf("object %s of %s moved to %s when b left", uid, was, is)
		}
	}
}

func TestViewIDNamesTheMembers(t *testing.T) {
	if NewView([]string{"b", "a", "a"}).ID != NewView([]string{"a", "b"}).ID {
		t.Error("the ID depends on order or duplicates")
	}
	if NewView([]string{"a", "b"}).ID == NewView([]string{"a", "c"}).ID {
		t.Error("two memberships share an ID")
	}
	if NewView(nil).ID != "" || NewView(nil).Owner("x") != "" {
		t.Error("the empty view owns something")
	}
}

func TestTableExpiresLeasesByItsOwnClock(t *testing.T) {
	clk := testclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tbl := table{}
	// renewTime far in the past: only what this replica saw counts.
	old := clk.Now().Add(-time.Hour)
	tbl.update([]kube.Lease{{Name: "a", Holder: "a", ResourceVersion: "1", RenewTime: old},
		{Name: "b", Holder: "b", ResourceVersion: "1", RenewTime: old}}, clk.Now())
	if got := len(tbl.live(clk.Now(), 15*time.Second)); got != 2 {
		t.Fatalf("live at first sight = %d, want 2", got)
	}
	clk.Step(10 * time.Second)
	tbl.update([]kube.Lease{{Name: "a", Holder: "a", ResourceVersion: "2"}, {Name: "b", Holder: "b", ResourceVersion: "1"}}, clk.Now())
	clk.Step(6 * time.Second)
	live := tbl.live(clk.Now(), 15*time.Second)
	if len(live) != 1 || live[0].Name != "a" {
		t.Fatalf("live 16s after b's last change = %v, want only a (renewed at 10s)", live)
	}
	if d := tbl.dead(clk.Now(), 15*time.Second); len(d) != 0 {
		t.Fatalf("dead after 16s = %v, want none before twice the duration", d)
	}
	clk.Step(15 * time.Second)
	if d := tbl.dead(clk.Now(), 15*time.Second); len(d) != 1 || d[0].Name != "b" {
		t.Fatalf("dead after 31s = %v, want b", d)
	}
	tbl.update([]kube.Lease{{Name: "a", Holder: "a", ResourceVersion: "2"}}, clk.Now())
	if _, ok := tbl["b"]; ok {
		t.Error("a vanished Lease is still in the table")
	}
}
