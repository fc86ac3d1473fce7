package app

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const pushLong = `Push a module to an OCI registry as a wasm artifact: an OCI manifest with
the config type application/vnd.wasm.config.v0+json and one application/wasm
layer (the CNCF TAG Runtime layout), annotated with the module's name,
version, ABI version and handlers. The module is loaded first, so only a
module the host accepts is pushed. REF is host[:port]/repository:tag; the
command prints the manifest digest, which pins this version
(host/repository@sha256:...).

Credentials come from the Docker config file (docker login, oras login).
Registries on localhost, 127.0.0.1 and [::1] are spoken to over plain HTTP,
others over HTTPS unless --plain-http is given.

Example - Push the example module to a local registry:
  kopf-wasm push bin/wasm/kopfexample.wasm localhost:5000/operators/kopfexample:v1

Example - Push to a registry you logged in to with docker login:
  kopf-wasm push handlers.wasm ghcr.io/acme/handlers:1.2.0`

func pushCmd(g *globals) *cobra.Command {
	var reg option.Registry
	cmd := &cobra.Command{
		Use:   "push [flags] MODULE.wasm REF",
		Short: "Push a module to an OCI registry",
		Long:  pushLong,
		Args:  args(2, 2, "MODULE.wasm and REF (host[:port]/repository:tag)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			log, err := g.logging.Logger(g.streams.Err)
			if err != nil {
				return err
			}
			art, err := host.Push(cmd.Context(), a[0], a[1], registryOptions(reg, log))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "Pushed:\t%s\n", art.Reference)
			writeArtifact(tw, art)
			return tw.Flush()
		},
	}
	reg.ApplyFlags(cmd.Flags())
	return cmd
}

// writeArtifact prints what push and pull share about an artifact.
func writeArtifact(tw *tabwriter.Writer, a host.Artifact) {
	fmt.Fprintf(tw, "Digest:\t%s\n", a.Digest)
	repo, _, _ := strings.Cut(a.Reference, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	fmt.Fprintf(tw, "Pinned:\t%s@%s\n", repo, a.Digest)
	name := strings.TrimSpace(a.Name + " " + a.Version)
	if name == "" {
		name = "(no kopf-wasm annotations)"
	}
	fmt.Fprintf(tw, "Module:\t%s, %s, %s\n", name, count(len(a.Handlers), "handler"), a.ModuleDigest)
}

// registryOptions turns the registry flags into the host's options; pulled
// modules are cached in $KOPF_WASM_CACHE/modules, else the host's default
// (~/.cache/kopf-wasm/modules on Linux).
func registryOptions(o option.Registry, log *slog.Logger) host.Registry {
	r := host.Registry{PlainHTTP: o.PlainHTTP, DockerConfig: o.Config, Logger: log}
	if root := os.Getenv("KOPF_WASM_CACHE"); root != "" {
		r.CacheDir = filepath.Join(root, "modules")
	}
	return r
}
