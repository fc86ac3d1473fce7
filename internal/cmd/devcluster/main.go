// Command devcluster runs a local Kubernetes control plane (etcd and
// kube-apiserver, see package testenv) for demos and manual testing: it
// installs the given CRD files, writes a kubeconfig, prints its path, and
// runs until interrupted (SIGINT or SIGTERM), then stops everything.
//
//	go run ./internal/cmd/devcluster -kubeconfig /tmp/kopf-wasm.kubeconfig examples/crd.yaml
//	kubectl --kubeconfig /tmp/kopf-wasm.kubeconfig get kopfexamples
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devcluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "kubeconfig", "where to write the kubeconfig (removed on exit)")
	port := fs.Int("port", 0, "the API server's port on 127.0.0.1 (0 picks a free one)")
	verbose := fs.Bool("v", false, "show the output of etcd and kube-apiserver")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: devcluster [-kubeconfig PATH] [-port N] [-v] [CRD-FILE-OR-FOLDER...]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	path, err := filepath.Abs(*kubeconfig)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts := testenv.Options{CRDPaths: fs.Args(), APIServerPort: *port, KubeconfigPath: path, Output: stderr}
	if !*verbose {
		opts.Output = nil
	}
	begin := time.Now()
	env, err := testenv.New(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(stderr, "devcluster:", err)
		}
		_ = os.Remove(path)
	}()

	fmt.Fprintf(stderr, "devcluster: API server %s up in %v (%d CRDs); Ctrl-C stops it\n",
		env.Config.Host, time.Since(begin).Round(time.Millisecond), len(env.CRDs()))
	fmt.Fprintln(stdout, env.Kubeconfig)

	<-ctx.Done()
	fmt.Fprintln(stderr, "devcluster: stopping")
	return nil
}
