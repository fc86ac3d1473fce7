package app

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/internal/imagebake"
)

const imageLong = `Build a container image without a Docker daemon and push it to REF.

With --module: the operator in one image. The host image --base (every
platform of it) gets the module at /modules/<file name> and the command
"run -A /modules/<file name>" plus the arguments after --, so that the image
runs the operator as it is (deploy/ runs it with its own arguments). The
module must load, or nothing is pushed.

With --host-binary (what make image does): the host's own image, for each
platform given as OS/ARCH=FILE (a statically linked kopf-wasm): an empty
base, the CA certificates of --ca-certs, the non-root user 65532, the binary
as the entrypoint /kopf-wasm, OCI labels. Every time in it is
SOURCE_DATE_EPOCH's (or the epoch), so the same binaries give the same
digest.

Registry credentials come from the Docker config (~/.docker/config.json).

Example - Bake a module into the published host image:
  kopf-wasm image --module handlers.wasm ghcr.io/acme/operator:v1

Example - The same, serving the namespace "team-a" with JSON logs:
  kopf-wasm image --module handlers.wasm ghcr.io/acme/operator:v1 -- -n team-a --log-format json

Example - The host image from binaries built for two platforms:
  kopf-wasm image --host-binary linux/amd64=bin/linux-amd64/kopf-wasm \
    --host-binary linux/arm64=bin/linux-arm64/kopf-wasm registry.example/kopf-wasm:dev`

func imageCmd(g *globals) *cobra.Command {
	var module, base, caCerts, revision, source string
	var binaries []string
	cmd := &cobra.Command{
		Use:   "image [flags] REF [-- RUN-ARGS...]",
		Short: "Build a container image of the host, or of the host with a module baked in",
		Long:  imageLong,
		Args:  args(1, -1, "REF (where to push the image)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			ref, extra := a[0], a[1:]
			switch {
			case module != "" && len(binaries) > 0:
				return clierr.Usagef(errors.New("image: --module and --host-binary exclude each other"), "pass one of them")
			case module != "":
				pushed, err := imagebake.BakeModule(cmd.Context(), base, module, ref, extra...)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(cmd.OutOrStdout(), pushed)
				return err
			case len(binaries) == 0:
				return clierr.Usagef(errors.New("image: nothing to build"), "pass --module FILE, or --host-binary OS/ARCH=FILE")
			case len(extra) > 0:
				return clierr.Usagef(errors.New("image: run arguments go with --module only"), "")
			}
			hi := imagebake.HostImage{Binaries: map[string]string{}, CACerts: caCerts, Version: resolveVersion(),
				Revision: revision, Source: source}
			for _, b := range binaries {
				platform, file, ok := strings.Cut(b, "=")
				if !ok {
					return clierr.Usagef(fmt.Errorf("image: --host-binary %q", b), "write OS/ARCH=FILE, e.g. linux/amd64=bin/kopf-wasm")
				}
				hi.Binaries[platform] = file
			}
			if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
				sec, err := strconv.ParseInt(epoch, 10, 64)
				if err != nil {
					return clierr.Usagef(fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err), "set it to Unix seconds")
				}
				hi.Created = time.Unix(sec, 0)
			}
			pushed, err := imagebake.BuildHost(cmd.Context(), ref, hi)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), pushed)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&module, "module", "", "bake this .wasm module into the host image --base")
	fs.StringVar(&base, "base", "ghcr.io/kopf-wasm/kopf-wasm:latest", "the host image to bake the module into")
	fs.StringArrayVar(&binaries, "host-binary", nil, "build the host image from this binary, OS/ARCH=FILE (repeat per platform)")
	fs.StringVar(&caCerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates for the host image")
	fs.StringVar(&revision, "revision", "", "the org.opencontainers.image.revision label (e.g. the git commit)")
	fs.StringVar(&source, "source", "https://github.com/kopf-wasm/kopf-wasm", "the org.opencontainers.image.source label")
	return cmd
}
