// Command devcluster runs a local Kubernetes control plane (etcd,
// kube-apiserver and kube-controller-manager, see package testenv) for demos
// and manual testing: it installs the given CRD files, writes a kubeconfig,
// prints its path, and runs until interrupted (SIGINT or SIGTERM), then
// stops everything. The controller manager runs testenv's default
// controllers (the garbage collector, namespace deletion, service accounts
// and tokens, PVC binding and protection); -controllers chooses others and
// -controller-manager=false leaves it out.
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
	"strings"
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
	verbose := fs.Bool("v", false, "show the output of etcd, kube-apiserver and kube-controller-manager")
	withCM := fs.Bool("controller-manager", true, "run kube-controller-manager too (garbage collection, namespace deletion, ...)")
	controllers := fs.String("controllers", strings.Join(testenv.DefaultControllers(), ","),
		"the controllers kube-controller-manager runs, as its --controllers takes them (\"*\" for all)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: devcluster [-kubeconfig PATH] [-port N] [-controller-manager=false] [-controllers LIST] [-v] [CRD-FILE-OR-FOLDER...]\n")
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

	opts := testenv.Options{CRDPaths: fs.Args(), APIServerPort: *port, KubeconfigPath: path, Output: stderr,
		ControllerManager: *withCM}
	for _, c := range strings.Split(*controllers, ",") {
		if c = strings.TrimSpace(c); c != "" {
			opts.Controllers = append(opts.Controllers, c)
		}
	}
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

	with := ""
	if *withCM {
		with = ", kube-controller-manager running " + *controllers
	}
	fmt.Fprintf(stderr, "devcluster: API server %s up in %v (%d CRDs%s); Ctrl-C stops it\n",
		env.Config.Host, time.Since(begin).Round(time.Millisecond), len(env.CRDs()), with)
	fmt.Fprintln(stdout, env.Kubeconfig)

	<-ctx.Done()
	fmt.Fprintln(stderr, "devcluster: stopping")
	return nil
}
