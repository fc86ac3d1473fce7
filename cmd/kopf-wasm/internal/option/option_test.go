package option

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
)

// flags declares every group on one flag set.
type flags struct {
	Kube
	Namespaces
	Peering
	Logging
	Output
	File string // a flag kept out of the environment
}

func parse(t *testing.T, args []string, env map[string]string) (*flags, error) {
	t.Helper()
	var f flags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, g := range []interface{ ApplyFlags(*pflag.FlagSet) }{&f.Kube, &f.Namespaces, &f.Peering, &f.Logging, &f.Output} {
		g.ApplyFlags(fs)
	}
	fs.StringVar(&f.File, "file", "", "a flag kept out of the environment")
	SkipEnv(fs, "file")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := Env(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		return &f, err
	}
	return &f, errors.Join(f.Namespaces.Validate(), f.Peering.Validate(), f.Output.Validate())
}

func TestGroups(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		err   string
		check func(*flags) bool
	}{
		{name: "defaults", check: func(f *flags) bool {
			return f.Kubeconfig == "" && len(f.Patterns) == 0 && !f.All && f.Logging.Level() == slog.LevelInfo && f.Output.Format == "table"
		}},
		{name: "repeatable namespaces", args: []string{"-n", "a", "--namespace", "b-*,!b-x"},
			check: func(f *flags) bool { return strings.Join(f.Patterns, " ") == "a b-*,!b-x" }},
		{name: "from the environment", env: map[string]string{"KOPF_WASM_NAMESPACE": "x-*,!x-y", "KOPF_WASM_KUBECONFIG": "/k",
			"KOPF_WASM_VERBOSE": "true", "KOPF_WASM_STANDALONE": "1"},
			check: func(f *flags) bool {
				return strings.Join(f.Patterns, " ") == "x-*,!x-y" && f.Kubeconfig == "/k" && f.Logging.Level() == slog.LevelDebug && f.Standalone
			}},
		{name: "a flag kept out of the environment", env: map[string]string{"KOPF_WASM_FILE": "x"},
			check: func(f *flags) bool { return f.File == "" }},
		{name: "the command line wins", args: []string{"--kubeconfig", "/cli"}, env: map[string]string{"KOPF_WASM_KUBECONFIG": "/env"},
			check: func(f *flags) bool { return f.Kubeconfig == "/cli" }},
		{name: "-n with -A", args: []string{"-n", "a", "-A"}, err: "exclude each other"},
		{name: "-n with -A from the environment", args: []string{"-n", "a"}, env: map[string]string{"KOPF_WASM_ALL_NAMESPACES": "true"},
			err: "exclude each other"},
		{name: "peering", args: []string{"-P", "ops"}, check: func(f *flags) bool { return f.Name == "ops" }},
		{name: "priority from the environment", env: map[string]string{"KOPF_WASM_PRIORITY": "100"},
			check: func(f *flags) bool { return f.Priority == 100 }},
		{name: "standalone from the environment with -P", args: []string{"-P", "ops"}, env: map[string]string{"KOPF_WASM_STANDALONE": "true"},
			err: "--standalone and -P/--peering exclude each other"},
		{name: "bad env value", env: map[string]string{"KOPF_WASM_ALL_NAMESPACES": "maybe"}, err: "KOPF_WASM_ALL_NAMESPACES"},
		{name: "bad output", args: []string{"-o", "yaml"}, err: "use -o table or -o json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parse(t, tt.args, tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || clierr.ExitCode(err) != clierr.ExitUsage {
					t.Fatalf("error = %v, want a usage error with %q", err, tt.err)
				}
				return
			}
			if err != nil || !tt.check(f) {
				t.Errorf("flags = %+v, %v", f, err)
			}
		})
	}
}

func TestLogger(t *testing.T) {
	for _, tt := range []struct {
		l   Logging
		err string
	}{
		{l: Logging{LogFormat: "json", Quiet: true}},
		{l: Logging{LogFormat: "xml"}, err: "unknown log format"},
		{l: Logging{Quiet: true, Debug: true}, err: "excludes"},
	} {
		_, err := tt.l.Logger(&strings.Builder{})
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v: error = %v, want %q", tt.l, err, tt.err)
		}
	}
}
