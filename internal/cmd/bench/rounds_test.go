package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		contenders []string
		rounds     int
		want       string
	}{
		{[]string{"kopf-wasm", "native"}, 1, "kopf-wasm-1 native-1"},
		{[]string{"kopf-wasm", "native"}, 2, "kopf-wasm-1 native-1 | native-2 kopf-wasm-2"},
		{[]string{"native", "kopf-wasm"}, 3, "native-1 kopf-wasm-1 | kopf-wasm-2 native-2 | native-3 kopf-wasm-3"},
		{[]string{"native"}, 2, "native-1 | native-2"},
	}
	for _, tt := range tests {
		var rounds []string
		for _, round := range (benchOptions{Contenders: tt.contenders, Rounds: tt.rounds}).schedule() {
			var names []string
			for _, p := range round {
				names = append(names, p.fileName(""))
			}
			rounds = append(rounds, strings.Join(names, " "))
		}
		if got := strings.Join(rounds, " | "); got != tt.want {
			t.Errorf("schedule(%v, %d) = %s, want %s", tt.contenders, tt.rounds, got, tt.want)
		}
	}
}

// TestPhaseOrder checks that over two rounds every phase has each
// contender first once: A.create B.create, B.update A.update, A.delete
// B.delete, then B first.
func TestPhaseOrder(t *testing.T) {
	o := benchOptions{Contenders: []string{"A", "B", "C"}, Rounds: 2}
	var got []string
	for _, round := range o.schedule() {
		for k := range phaseCount {
			var names []string
			for _, p := range phaseOrder(round, k) {
				names = append(names, p.Contender)
			}
			got = append(got, strings.Join(names, ""))
		}
	}
	want := "ABC CBA ABC CBA ABC CBA"
	if strings.Join(got, " ") != want {
		t.Errorf("phase orders %s, want %s", strings.Join(got, " "), want)
	}
	if first := (pass{Contender: "A"}).String(); !strings.Contains(first, "warm-up") {
		t.Errorf("round 0 is %q, want it named the warm-up", first)
	}
}

func TestCombinePasses(t *testing.T) {
	pass := func(name string, round int, create, cpu, rss, api float64, writes int) result {
		return result{Contender: name, Round: round, N: 10, Changes: 30,
			Phases:     []phaseResult{{Name: "create", Seconds: create, SentSeconds: create / 2}},
			Writes:     writeCount{Total: writes, ByRequest: map[string]int{"patch kopfexamples": writes}},
			CPUSeconds: cpu, PeakRSSMB: rss, APIServerCPUPerChangeMs: api, DriverWrites: 30}
	}
	results := []result{
		pass("kopf-wasm", 1, 2, 0.03, 80, 4, 40),
		pass("native", 1, 3, 0.06, 70, 5, 40),
		pass("native", 2, 5, 0.03, 75, 7, 41),
		pass("kopf-wasm", 2, 4, 0.03, 90, 6, 40),
	}
	got := combinePasses(results, []string{"kopf-wasm", "native"})
	if len(got) != 2 || got[0].Contender != "kopf-wasm" || got[1].Contender != "native" {
		t.Fatalf("combined = %+v", got)
	}
	tests := []struct {
		what      string
		got, want float64
	}{
		{"kopf-wasm create (mean)", got[0].Phases[0].Seconds, 3},
		{"kopf-wasm sent (mean)", got[0].Phases[0].SentSeconds, 1.5},
		{"native create (mean)", got[1].Phases[0].Seconds, 4},
		{"kopf-wasm CPU per change (over 60 changes)", got[0].CPUPerChangeMs, 1},
		{"native CPU per change", got[1].CPUPerChangeMs, 1.5},
		{"kopf-wasm peak (max)", got[0].PeakRSSMB, 90},
		{"native API server CPU (mean)", got[1].APIServerCPUPerChangeMs, 6},
		{"native writes per change", got[1].WritesPerChange, 81.0 / 60},
		{"native passes", float64(got[1].Passes), 2},
		{"native changes", float64(got[1].Changes), 60},
		{"native driver writes", float64(got[1].DriverWrites), 60},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tt.what, tt.got, tt.want)
		}
	}
	if got[1].Writes.ByRequest["patch kopfexamples"] != 81 {
		t.Errorf("native writes by request = %v, want 81", got[1].Writes.ByRequest)
	}
	if results[2].Writes.ByRequest["patch kopfexamples"] != 41 {
		t.Error("combining changed a pass's counts")
	}

	rep := report{N: 10, Rounds: 2, Results: results, Summary: got}
	var out bytes.Buffer
	rep.table(&out)
	text := out.String()
	for _, want := range []string{
		"2 rounds, the order reversed in every other one; the columns are the means of 2 passes each",
		"round 1 alone (kopf-wasm first): kopf-wasm/native create 0.67×",
		"round 2 alone (native first): kopf-wasm/native create 0.80×",
		"native (round 2): writes patch kopfexamples 41",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if line := findLine(text, "create phase (s)"); !strings.Contains(line, "0.75") {
		t.Errorf("the create row should compare the means (3/4 = 0.75): %q", line)
	}
}

func TestPhasesCPU(t *testing.T) {
	phases := []phaseResult{
		{CPU: cpuSample{Operator: 1, APIServer: 4, Etcd: 0.5, Driver: 0.5, Machine: 7}},
		{CPU: cpuSample{Operator: 2, APIServer: 5, Etcd: 0.5, Driver: 1, Machine: 9}},
	}
	got := phasesCPU(phases)
	if want := (cpuSample{Operator: 3, APIServer: 9, Etcd: 1, Driver: 1.5, Machine: 16}); got != want {
		t.Errorf("phasesCPU = %+v, want %+v", got, want)
	}
	if others := got.Others(); others != 1.5 {
		t.Errorf("Others = %v, want 1.5", others)
	}
}
