package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/host"
)

// Streams are the command's standard input, output and error.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run runs the command line args (without the program name) until it is
// done or ctx ends, and returns the process exit code (see package clierr).
func Run(ctx context.Context, streams Streams, args []string) int {
	root := newRoot(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return clierr.ExitOK
	}
	err = classify(err)
	fmt.Fprintln(streams.Err, clierr.Message(err))
	return clierr.ExitCode(err)
}

// globals are what every command shares: the streams and the logging flags.
type globals struct {
	streams Streams
	logging option.Logging
}

const rootLong = `kopf-wasm runs Kubernetes operators written with Kopf's programming model
whose handlers are WebAssembly modules: the host watches the resources the
modules' manifests name, detects causes, calls the handlers in sandboxes and
stores their results and progress on the objects, as Kopf does.

Every flag can also be set through an environment variable: KOPF_WASM_ and
the flag's name in upper case with dashes as underscores, e.g.
KOPF_WASM_NAMESPACE=team-a or KOPF_WASM_ALL_NAMESPACES=true (except build's
-o). The command line wins over the environment.`

// newRoot builds the command tree.
func newRoot(streams Streams) *cobra.Command {
	g := &globals{streams: streams}
	root := &cobra.Command{
		Use:           "kopf-wasm",
		Short:         "Run Kubernetes operators whose handlers are WebAssembly modules",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return option.Env(cmd.Flags(), os.LookupEnv)
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	g.logging.ApplyFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return clierr.Usagef(err, fmt.Sprintf("see '%s --help'", cmd.CommandPath()))
	})
	root.AddCommand(runCmd(g), inspectCmd(g), invokeCmd(g), rbacCmd(g), buildCmd(g), pushCmd(g), pullCmd(g), signCmd(g), verifyCmd(g), initCmd(g), cacheCmd(g), freezeCmd(g), resumeCmd(g), imageCmd(g), versionCmd(g))
	root.AddCommand(replayCmd(g), renderCmd(g))
	return root
}

// classify turns the errors of cobra and of the host into CLI errors with
// the right exit code and, where the error does not say it, what to do.
func classify(err error) error {
	var cerr *clierr.Error
	switch {
	case errors.As(err, &cerr):
		return err
	case strings.HasPrefix(err.Error(), "unknown command"):
		return clierr.Usagef(err, "see 'kopf-wasm --help'")
	case errors.Is(err, host.ErrUsage):
		return clierr.Usagef(err, "")
	case errors.Is(err, host.ErrKubeconfig):
		return clierr.New(err, "pass a readable kubeconfig with --kubeconfig (or KUBECONFIG) and an existing --context")
	case errors.Is(err, host.ErrUnreachable):
		return clierr.New(err, "check that the cluster is up and that `kubectl version` works with the same kubeconfig and context")
	}
	return classifyRegistry(err)
}

// classifyRegistry adds what to do to the errors of push, pull and of run's
// OCI references.
func classifyRegistry(err error) error {
	switch {
	case errors.Is(err, host.ErrReference):
		return clierr.Usagef(err, "")
	case errors.Is(err, host.ErrRegistryUnreachable):
		return clierr.New(err, "check that the registry runs and that its address is right (--plain-http for a registry without TLS); "+
			"a module pulled once by digest runs from the cache without it")
	case errors.Is(err, host.ErrRegistryAuth):
		return clierr.New(err, "log in with `docker login HOST` (or `oras login HOST`), or name the Docker config file with --registry-config")
	case errors.Is(err, host.ErrArtifactNotFound):
		return clierr.New(err, "check the repository and the tag or digest, or push the module first with `kopf-wasm push MODULE.wasm REF`")
	case errors.Is(err, host.ErrNotModuleArtifact), errors.Is(err, host.ErrNotWasm):
		return clierr.New(err, "the reference names something other than a wasm module; push one with `kopf-wasm push MODULE.wasm REF`")
	case errors.Is(err, host.ErrModuleRefused):
		return clierr.New(err, "sign the module with `kopf-wasm sign --key KEY MODULE`, or check the policy's keys and identities")
	case errors.Is(err, host.ErrDigestMismatch):
		return clierr.New(err, "the content was altered between the registry and here; nothing was run or cached: pull again, "+
			"and if it persists push the module again and check the registry or proxy")
	}
	return err
}

// args checks the number of positional arguments, as a usage error that
// names them.
func args(minN, maxN int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		switch {
		case len(a) < minN:
			return clierr.Usagef(fmt.Errorf("%s: missing %s", cmd.CommandPath(), names), fmt.Sprintf("see '%s --help'", cmd.CommandPath()))
		case maxN >= 0 && len(a) > maxN:
			return clierr.Usagef(fmt.Errorf("%s: unexpected arguments %q", cmd.CommandPath(), a[maxN:]), fmt.Sprintf("see '%s --help'", cmd.CommandPath()))
		}
		return nil
	}
}
