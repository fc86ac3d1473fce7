// Command kopf-wasm runs Kubernetes operators whose handlers are WebAssembly
// modules, with Kopf's programming model. For now it only reports its
// version; later issues add `run` and the rest of the CLI.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time: -ldflags "-X main.version=v0.1.0".
var version = ""

func main() {
	if err := newRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "kopf-wasm",
		Short:         "Run Kubernetes operators whose handlers are WebAssembly modules",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version of kopf-wasm",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "kopf-wasm", resolveVersion())
			return err
		},
	})
	return root
}

// resolveVersion prefers the link-time version, then the module version
// (set by `go install ...@vX`), then "(devel)".
func resolveVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
