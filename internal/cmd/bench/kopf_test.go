package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSourcePatch(t *testing.T) {
	tests := []struct {
		name, text, want string
		fails            bool
	}{
		{"applied", "a\n  proxy=x,\nb\n", "a\n  # proxy=x,\nb\n", false},
		{"already applied", "a\n  # proxy=x,\nb\n", "a\n  # proxy=x,\nb\n", false},
		{"missing", "a\nb\n", "a\nb\n", true},
		{"twice", "  proxy=x,\n  proxy=x,\n", "  proxy=x,\n  proxy=x,\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "auth.py")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			err := sourcePatch{file: "auth.py", old: "  proxy=x,", new: "  # proxy=x,"}.apply(dir)
			if (err != nil) != tt.fails {
				t.Fatalf("apply: %v, want an error: %v", err, tt.fails)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPrepareKopfMissingSource(t *testing.T) {
	dir := t.TempDir()
	err := prepareKopf(t.Context(), dir, "python3")
	if err == nil || !strings.Contains(err.Error(), "archive "+kopfVersion) || strings.Contains(err.Error(), "\n") {
		t.Errorf("prepareKopf on an empty folder = %v, want one line saying how to extract Kopf", err)
	}
}

func TestKopfLogFlags(t *testing.T) {
	tests := []struct {
		level string
		want  []string
	}{
		{"info", nil},
		{"debug", []string{"--verbose"}},
		{"warn", []string{"--quiet"}},
		{"error", []string{"--quiet"}},
	}
	for _, tt := range tests {
		if got := kopfLogFlags(tt.level); !slices.Equal(got, tt.want) {
			t.Errorf("kopfLogFlags(%q) = %q, want %q", tt.level, got, tt.want)
		}
	}
}

func TestKopfArgv(t *testing.T) {
	d := &driver{kubeconfig: "/k/kubeconfig", o: benchOptions{KopfSource: "/src", KopfPython: "/usr/bin/python3",
		LogLevel: "info", kopfExample: "/repo/example.py"}}
	got := strings.Join(d.kopfArgv("ns"), " ")
	want := `/bin/sh -c echo ready; exec "$@" kopf env PYTHONPATH=/src KUBECONFIG=/k/kubeconfig PYTHONDONTWRITEBYTECODE=1 ` +
		"/usr/bin/python3 -m kopf run --standalone --namespace ns /repo/example.py"
	if got != want {
		t.Errorf("kopfArgv = %s\nwant %s", got, want)
	}
}

func TestParseBenchPythonContenders(t *testing.T) {
	o, err := parseBench([]string{"-contenders", "kopf-wasm,kopf-wasm-python,kopf", "-python-wasm", "/m.wasm"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Contenders, ",") != "kopf-wasm,kopf-wasm-python,kopf" || o.PythonModule != "/m.wasm" ||
		o.KopfSource == "" || o.KopfPython == "" {
		t.Errorf("options = %+v", o)
	}
}

func TestPythonRatios(t *testing.T) {
	res := func(name string, cpu, rss float64, writes int) result {
		return result{Contender: name, Changes: 3, CPUPerChangeMs: cpu, PeakRSSMB: rss,
			Writes: writeCount{Total: writes}, WritesPerChange: float64(writes) / 3,
			Phases: []phaseResult{{Name: "create", Seconds: cpu}}}
	}
	rep := report{Summary: []result{res("kopf-wasm", 1, 100, 4), res(pythonContender, 1.5, 150, 4), res(kopfContender, 5, 400, 7)}}
	for round, kopfRSS := range []float64{200, 400} {
		py, kopf := res(pythonContender, 1.5, 150, 4), res(kopfContender, 5, kopfRSS, 7)
		py.Round, kopf.Round = round+1, round+1
		rep.Results = append(rep.Results, py, kopf)
	}
	var out bytes.Buffer
	rep.pythonRatios(&out)
	for _, want := range []string{
		"kopf-wasm-python/kopf: CPU per change 0.30× (target ≤ 0.4×: yes), peak RSS 0.38× (target ≤ 0.5×: yes)",
		"writes per change 1.333 vs 1.333 (target equal: yes), CPU per change 1.50×",
		"round 1 alone: kopf-wasm-python/kopf CPU per change 0.30×, peak RSS 0.75× (150.0 MB / 200.0 MB)",
		"round 2 alone: kopf-wasm-python/kopf CPU per change 0.30×, peak RSS 0.38×",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}
