package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	phases := func(c, u, d float64) []phaseResult {
		return []phaseResult{{Name: "create", Seconds: c}, {Name: "update", Seconds: u}, {Name: "delete", Seconds: d}}
	}
	rep := report{N: 10, Concurrency: 4, NativeWorkers: 16, Go: "go1.26", Server: "kube-apiserver v1.34.4", Machine: "cpu, 2 CPUs",
		Results: []result{
			{Contender: "kopf-wasm", Phases: phases(1.0, 2.0, 1.0), WritesPerChange: 1.333, CPUPerChangeMs: 1.2, PeakRSSMB: 120, APIServerCPUPerChangeMs: 3},
			{Contender: "native", Phases: phases(1.0, 1.0, 1.0), WritesPerChange: 1.333, CPUPerChangeMs: 1.0, PeakRSSMB: 80, APIServerCPUPerChangeMs: 2},
		}}
	var out bytes.Buffer
	rep.table(&out)
	text := out.String()
	for _, want := range []string{
		"N=10 (30 changes)",
		"kopf-wasm  native  kopf-wasm/native",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	wantRows := map[string][]string{
		"create phase (s)":               {"1.00", "1.00", "1.00", "≤ 1.1×", "yes"},
		"update phase (s)":               {"2.00", "1.00", "2.00", "≤ 1.1×", "NO"},
		"writes per change":              {"1.333", "1.333", "1.00", "≤ 1.340", "yes"},
		"CPU per change (ms)":            {"1.200", "1.000", "1.20", "≤ 1.3×", "yes"},
		"peak RSS (MB)":                  {"120.0", "80.0", "1.50", "≤ 100.0", "NO"},
		"API server CPU per change (ms)": {"3.000", "2.000", "1.50", "-", "-"},
	}
	for label, cells := range wantRows {
		line := findLine(text, label)
		if line == "" {
			t.Errorf("no row %q:\n%s", label, text)
			continue
		}
		got := strings.Fields(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), label)))
		if strings.Join(got, "|") != strings.Join(strings.Fields(strings.Join(cells, " ")), "|") {
			t.Errorf("row %q = %q, want %q", label, got, cells)
		}
	}
}

func TestTableWithoutNative(t *testing.T) {
	rep := report{N: 1, Results: []result{{Contender: "kopf-wasm", Phases: []phaseResult{{Name: "create", Seconds: 1}},
		WritesPerChange: 2, PeakRSSMB: 50}}}
	var out bytes.Buffer
	rep.table(&out)
	if line := findLine(out.String(), "create phase (s)"); !strings.HasSuffix(strings.TrimSpace(line), "?") {
		t.Errorf("a ratio target without the native contender should be unknown: %q", line)
	}
	if line := findLine(out.String(), "writes per change"); !strings.HasSuffix(strings.TrimSpace(line), "NO") {
		t.Errorf("2 writes per change should miss the target: %q", line)
	}
}

func findLine(text, prefix string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			return line
		}
	}
	return ""
}

func TestParseBench(t *testing.T) {
	o, err := parseBench([]string{"-n", "50", "-contenders", "native, kopf-wasm"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.N != 50 || strings.Join(o.Contenders, ",") != "native,kopf-wasm" || o.Concurrency != 16 || o.NativeWorkers != 16 {
		t.Errorf("options = %+v", o)
	}
	if _, err := parseBench([]string{"-contenders", "bogus"}, &bytes.Buffer{}); err == nil {
		t.Error("an unknown contender was accepted")
	}
	if d := (benchOptions{}).withDefaults(); d.N != 2000 || len(d.Contenders) != 2 || d.PhaseTimeout == 0 || d.LogLevel != "info" {
		t.Errorf("defaults = %+v", d)
	}
}
