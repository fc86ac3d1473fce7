package app

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const buildLong = `Build a Go handler module (a main package that registers handlers with the
kopf-wasm guest SDK) into a .wasm file, with the flags the host needs:

  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o OUT .

then load the result once to check that it is a module the host accepts
and print its name and handlers. It needs Go (1.24 or newer) on PATH.
DIR defaults to the current folder, OUT to DIR/<folder name>.wasm.

Example - Build the module in the current folder:
  kopf-wasm build

Example - Build the example module into bin/:
  kopf-wasm build examples/kopfexample -o bin/kopfexample.wasm`

func buildCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "build [flags] [DIR]",
		Short: "Build a Go handler module to .wasm",
		Long:  buildLong,
		Args:  args(0, 1, "DIR"),
		RunE: func(cmd *cobra.Command, a []string) error {
			dir := "."
			if len(a) == 1 {
				dir = a[0]
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return clierr.Usagef(fmt.Errorf("build: %s is not a folder", dir), "name the folder of the module's main package")
			}
			if out == "" {
				out = filepath.Join(abs, filepath.Base(abs)+".wasm")
			} else if out, err = filepath.Abs(out); err != nil {
				return err
			}
			if err := goBuild(cmd, g, abs, out); err != nil {
				return err
			}
			m, _, err := host.Inspect(cmd.Context(), out)
			if err != nil {
				return fmt.Errorf("built %s, but the host refuses it: %w", out, err)
			}
			fmt.Fprintf(g.streams.Out, "built %s: module %s %s, %d handlers\n", out, m.Module.Name, m.Module.Version, len(m.Handlers))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the .wasm file to write (default DIR/<folder name>.wasm)")
	option.SkipEnv(cmd.Flags(), "output") // KOPF_WASM_OUTPUT is inspect's and invoke's format

	return cmd
}

// goBuild runs the Go toolchain for wasip1 in dir; its output goes to the
// error stream.
func goBuild(cmd *cobra.Command, g *globals, dir, out string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return clierr.New(errors.New("build: the go command is not on PATH"),
			"install Go 1.24 or newer (https://go.dev/doc/install) and run the command again")
	}
	c := exec.CommandContext(cmd.Context(), gobin, "build", "-buildmode=c-shared", "-o", out, ".")
	c.Dir = dir
	c.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	c.Stdout, c.Stderr = g.streams.Err, g.streams.Err
	if err := c.Run(); err != nil {
		return clierr.New(fmt.Errorf("build: go build in %s failed (%w)", dir, err), "see the compiler's output above")
	}
	return nil
}
