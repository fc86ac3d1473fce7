package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		linked  string
		args    []string
		want    string
		wantErr bool
	}{
		{name: "link-time version", linked: "v1.2.3", args: []string{"version"}, want: "kopf-wasm v1.2.3\n"},
		{name: "no link-time version", args: []string{"version"}, want: "kopf-wasm "},
		{name: "extra argument", args: []string{"version", "extra"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := version
			version = tc.linked
			defer func() { version = old }()

			var stdout, stderr bytes.Buffer
			cmd := newRootCommand(&stdout, &stderr)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got output %q", stdout.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("Execute: %v (stderr %q)", err, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.want) || tc.linked != "" && stdout.String() != tc.want {
				t.Errorf("output %q, want %q", stdout.String(), tc.want)
			}
		})
	}
}
