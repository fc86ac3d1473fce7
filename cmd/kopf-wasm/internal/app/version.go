package app

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time:
//
//	-ldflags "-X github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/app.version=v0.1.0"
var version = ""

func versionCmd(_ *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kopf-wasm",
		Args:  args(0, 0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "kopf-wasm", resolveVersion())
			return err
		},
	}
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
