package app

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const pullLong = `Pull a module from an OCI registry into the module cache and, with -o,
copy it to a file. REF is host[:port]/repository:tag or
host[:port]/repository@sha256:<hex>. Layers of type application/wasm and the
older application/vnd.wasm.content.layer.v1+wasm are accepted; every digest
is verified.

The cache ($KOPF_WASM_CACHE/modules, default ~/.cache/kopf-wasm/modules)
keeps modules by digest: a digest pulled once is served from it with no
registry; a tag is always resolved at the registry, and when the registry is
unreachable the digest last seen for the tag is served, with a warning.

Example - Pull a module and write it to a file:
  kopf-wasm pull localhost:5000/operators/kopfexample:v1 -o kopfexample.wasm

Example - Pull a pinned version into the cache only:
  kopf-wasm pull ghcr.io/acme/handlers@sha256:0123...`

func pullCmd(g *globals) *cobra.Command {
	var reg option.Registry
	var out string
	cmd := &cobra.Command{
		Use:   "pull [flags] REF",
		Short: "Pull a module from an OCI registry",
		Long:  pullLong,
		Args:  args(1, 1, "REF (host[:port]/repository:tag or @digest)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			art, err := host.Pull(cmd.Context(), a[0], registryOptions(reg, log))
			if err != nil {
				return err
			}
			file := art.Path
			if out != "" {
				if err := copyFile(art.Path, out); err != nil {
					return err
				}
				file = out
			}
			tw := tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "Pulled:\t%s\n", art.Reference)
			writeArtifact(tw, art)
			fmt.Fprintf(tw, "File:\t%s\n", file)
			return tw.Flush()
		},
	}
	reg.ApplyFlags(cmd.Flags())
	cmd.Flags().StringVarP(&out, "output", "o", "", "also write the module to this file")
	option.SkipEnv(cmd.Flags(), "output") // KOPF_WASM_OUTPUT is inspect's and invoke's format
	return cmd
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("read the cached module: %w", err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", to, err)
	}
	return nil
}
