package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopf-wasm/kopf-wasm/internal/profiling"
)

// operatorCommand is the hidden subcommand that runs the native contender.
const operatorCommand = "operator"

// nativeFinalizer is the native controller's finalizer.
const nativeFinalizer = "bench.kopf.dev/finalizer"

var kopfExampleGVK = schema.GroupVersionKind{Group: "kopf.dev", Version: "v1", Kind: "KopfExample"}

// operatorOptions are the hidden subcommand's flags.
type operatorOptions struct {
	kubeconfig, namespace, userAgent, cpuProfile string
	workers                                      int
	logLevel                                     slog.Level
	// reportProgress prints "synced" and "cycles N" as benchoperator's
	// -report-progress does (the cold-start benchmark).
	reportProgress bool
	// gvk is the resource the controller reconciles (KopfExample unless
	// -group, -version or -kind say otherwise: the density benchmark's
	// generated resources); timer, when above zero, requeues every live
	// object that often, as a Kopf timer would run (density.go).
	gvk   schema.GroupVersionKind
	timer time.Duration
	// peakDir receives what holds the memory at the peak RSS
	// (profiling.PeakSnapshots).
	peakDir string
}

func parseOperator(args []string, stderr io.Writer) (operatorOptions, error) {
	var o operatorOptions
	fs := flag.NewFlagSet("bench operator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (required)")
	fs.StringVar(&o.namespace, "namespace", "", "the one namespace to serve (required)")
	fs.StringVar(&o.userAgent, "user-agent", "bench-native", "the HTTP user agent of the Kubernetes client")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file, from SIGUSR1 on")
	fs.IntVar(&o.workers, "workers", 16, "concurrent reconciles (MaxConcurrentReconciles)")
	fs.BoolVar(&o.reportProgress, "report-progress", false,
		`print "synced" on stdout once the cache synced, then "cycles N" (reconciles so far) whenever N changed`)
	fs.StringVar(&o.gvk.Group, "group", kopfExampleGVK.Group, "the API group of the reconciled resource")
	fs.StringVar(&o.gvk.Version, "version", kopfExampleGVK.Version, "the API version of the reconciled resource")
	fs.StringVar(&o.gvk.Kind, "kind", kopfExampleGVK.Kind, "the kind of the reconciled resource")
	fs.StringVar(&o.peakDir, "peak-dir", "", "write a heap profile, smaps and the runtime's memory classes here whenever RSS reaches a new peak")
	fs.DurationVar(&o.timer, "timer", 0, "requeue every live object this often, as a Kopf timer runs (0: never)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.kubeconfig == "" || o.namespace == "" {
		return o, errors.New("operator: -kubeconfig and -namespace are required")
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("operator: -log-level: %w", err)
	}
	return o, nil
}

// runOperator runs the native contender: a controller-runtime manager with
// one controller for KopfExamples in one namespace, until ctx ends. It
// prints "ready" on stdout once the manager's cache has synced.
func runOperator(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOperator(args, stderr)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		stopProfile, err := profiling.OnSignal(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	defer profiling.FreeOnSignal()()
	if o.peakDir != "" {
		stopPeaks, err := profiling.PeakSnapshots(o.peakDir, 200*time.Millisecond)
		if err != nil {
			return err
		}
		defer stopPeaks()
	}
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel})))

	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	// As controller-runtime's own config loader does: no client-side rate
	// limit, the server's priority and fairness apply.
	cfg.QPS = -1
	cfg.UserAgent = o.userAgent

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{o.namespace: {}}},
		Client:                 client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	rec := &reconciler{client: mgr.GetClient(), gvk: o.gvk, timer: o.timer}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(o.gvk.Kind)).
		For(newObject(o.gvk)).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.workers}).
		Complete(rec)
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("operator: the cache did not sync: %w", <-done)
	}
	fmt.Fprintln(stdout, "ready")
	if o.reportProgress {
		fmt.Fprintln(stdout, "synced")
		go reportCycles(ctx, rec.reconciles.Load, stdout)
	}
	if err := <-done; err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	return nil
}

// newObject is an empty object of the kind gvk, for the client to fill.
func newObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// reconciler does what the kopfexample module does, the way a Go
// controller would: a finalizer while the object lives; status.create_fn
// when it is first seen; status.update_fn when its generation moves past
// status.observedGeneration; the finalizer removed on deletion. Status is
// written through the status subresource; every reconcile writes at most
// once (PUT with the cached resourceVersion, as controllers usually do).
// With a timer, a live object is requeued that often, as a Kopf timer
// runs on it (the reconcile then finds nothing to write).
type reconciler struct {
	client     client.Client
	gvk        schema.GroupVersionKind
	timer      time.Duration
	reconciles atomic.Int64
}

// Reconcile brings one KopfExample up to date.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	defer r.reconciles.Add(1)
	obj := newObject(r.gvk)
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		if controllerutil.RemoveFinalizer(obj, nativeFinalizer) {
			return ctrl.Result{}, client.IgnoreNotFound(r.client.Update(ctx, obj))
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(obj, nativeFinalizer) {
		// One write per reconcile: the watch event of this update brings
		// the object back with the finalizer, and the status is written
		// then. Writing it now too would race the cache (a reconcile
		// queued meanwhile would see the object without the status and
		// write it again, or conflict).
		return ctrl.Result{}, client.IgnoreNotFound(r.client.Update(ctx, obj))
	}
	if !statusChange(obj) {
		return ctrl.Result{RequeueAfter: r.timer}, nil
	}
	return ctrl.Result{RequeueAfter: r.timer}, client.IgnoreNotFound(r.client.Status().Update(ctx, obj))
}

// statusChange sets the status the object needs and reports whether it
// changed: the create message when there is none yet, the update message
// when the spec changed since the status was last written.
func statusChange(obj *unstructured.Unstructured) bool {
	gen := obj.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	created, _, _ := unstructured.NestedString(obj.Object, "status", "create_fn", "message")
	var field, message string
	switch {
	case created == "":
		field, message = "create_fn", "hello world"
	case observed < gen:
		field, message = "update_fn", "updated"
	default:
		return false
	}
	_ = unstructured.SetNestedField(obj.Object, map[string]any{"message": message}, "status", field)
	_ = unstructured.SetNestedField(obj.Object, gen, "status", "observedGeneration")
	return true
}

// reportCycles prints "cycles N" whenever count() changed, checking every
// 100 ms until ctx ends.
func reportCycles(ctx context.Context, count func() int64, stdout io.Writer) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := count(); n != last {
			last = n
			fmt.Fprintf(stdout, "cycles %d\n", n)
		}
	}
}
