package hackscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeGo stands in for the go command: it prints $FAKE_OUT and exits with
// $FAKE_RC, whatever it is asked.
const fakeGo = `#!/bin/sh
printf '%s\n' "$FAKE_OUT"
exit "$FAKE_RC"
`

// TestFuzzScriptTellsRaceFromFailure: hack/fuzz.sh lets a target pass that
// failed by Go's fuzztime race alone (go.dev/issue/75804: only "context
// deadline exceeded", no failing input), and fails on everything else.
func TestFuzzScriptTellsRaceFromFailure(t *testing.T) {
	const race = "fuzz: elapsed: 3s, execs: 9337 (3112/sec)\n--- FAIL: FuzzOne (4.02s)\n    context deadline exceeded\nFAIL"
	tests := []struct {
		name   string
		out    string
		rc     string
		passes bool
	}{
		{"pass", "PASS\nok  \texample.com/x\t3.1s", "0", true},
		{"coordinator race", race, "1", true},
		{"failing input", "--- FAIL: FuzzOne (0.20s)\n    context deadline exceeded\n    Failing input written to testdata/fuzz/FuzzOne/abc\nFAIL", "1", false},
		{"other error", "--- FAIL: FuzzOne (4.02s)\n    panic: boom\nFAIL", "1", false},
		{"deadline and more", "--- FAIL: FuzzOne (4.02s)\n    context deadline exceeded\n--- FAIL: FuzzOne/seed#0 (0.00s)\n    x_test.go:9: wrong\nFAIL", "1", false},
		{"build failure", "x_test.go:3:1: syntax error", "1", false},
	}
	root := scratchRepo(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("bash", filepath.Join(root, "hack", "fuzz.sh"))
			cmd.Env = append(os.Environ(), "GO="+filepath.Join(root, "fakego"), "FUZZTIME=3s", "FAKE_OUT="+tt.out, "FAKE_RC="+tt.rc)
			out, err := cmd.CombinedOutput()
			if passed := err == nil; passed != tt.passes {
				t.Fatalf("passed = %v, want %v; output:\n%s", passed, tt.passes, out)
			}
			if tt.passes && strings.Contains(tt.out, "FAIL") && !strings.Contains(string(out), "go.dev/issue/75804") {
				t.Errorf("a raced target is not reported as the race:\n%s", out)
			}
		})
	}
}

// scratchRepo lays out a module with one fuzz target, hack/fuzz.sh and the
// fake go command in a temporary folder.
func scratchRepo(t *testing.T) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	script, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "hack", "fuzz.sh"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	files := map[string]string{
		"hack/fuzz.sh": string(script),
		"fakego":       fakeGo,
		"go.mod":       "module example.com/x\n",
		"x/x_test.go":  "package x\n\nimport \"testing\"\n\nfunc FuzzOne(f *testing.F) {}\n",
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
