package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// The scenarios "coldstart" and "steady" (-scenario coldstart,steady) run
// on N objects that exist and were handled: for each contender in turn, a
// fresh namespace, its operator (run with -report-progress), the create
// phase of the workload, and then:
//
//   - coldstart: the operator is stopped and started again on the N
//     handled objects: the time until it is ready (its initial listing
//     delivered) and until it has looked at every object (N processing
//     cycles), its API writes meanwhile (nothing changed: 0 expected), its
//     CPU and its peak RSS, which the initial listing sets. For kopf-wasm
//     it is done up to three times on the same objects, the default last:
//     with metadata.managedFields kept in the cache (-keep-managed-fields:
//     what dropping them saves), with the listing one LIST instead of a
//     stream (-watch-list=false: what streaming saves), and as it runs by
//     default.
//   - steady: on the operator now running, -rate changes per second (a
//     patch of spec.field of one object after another) for -duration, and
//     the time from sending each patch to the moment the driver's watch
//     shows the handler's result for it (steady.go).
//
// The objects stay when the contender is done (deleting them needs the
// operator); every contender has its own namespace.

// scenarioWorkload is the default scenario, the workload of phases.
const scenarioWorkload = "workload"

// knownScenarios may be named with -scenario.
var knownScenarios = []string{scenarioWorkload, "coldstart", "steady"}

// coldResult is one cold start of an operator on N handled objects.
type coldResult struct {
	Variant string `json:"variant"`
	// ReadySeconds is from the start of the process until it reported its
	// initial listing delivered ("synced"); LookedAtSeconds until it had
	// run a processing cycle (a reconcile) for every object.
	ReadySeconds    float64 `json:"ready_seconds"`
	LookedAtSeconds float64 `json:"looked_at_seconds"`
	Cycles          int64   `json:"cycles"`
	// Writes are the operator's API writes in the namespace from its start
	// until Settle after it had looked at every object (audit log).
	Writes writeCount `json:"writes"`
	// CPUSeconds is the operator's CPU until then; PeakRSSMB its VmHWM
	// then; RSSPerObjectKB what that is above the first start's peak
	// before any object existed (scaleResult.ReadyPeakRSSMB), per object.
	CPUSeconds     float64 `json:"cpu_seconds"`
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	RSSPerObjectKB float64 `json:"rss_per_object_kb"`
	// LiveRSSMB is the operator's RSS after it returned free memory to the
	// OS (a GC and debug.FreeOSMemory on SIGUSR2): what it holds, the
	// cache of N objects included, rather than its peak, which depends on
	// when the collector ran during the listing.
	LiveRSSMB    float64 `json:"live_rss_mb"`
	APIServerCPU float64 `json:"apiserver_cpu_seconds"`
}

// scaleResult is one contender's figures in the scale scenarios.
type scaleResult struct {
	Contender string      `json:"contender"`
	Namespace string      `json:"namespace"`
	N         int         `json:"n"`
	Create    phaseResult `json:"create"`
	// ReadyPeakRSSMB is the operator's peak RSS at its first start, once
	// it handled the canary, before the N objects were created.
	ReadyPeakRSSMB float64       `json:"ready_peak_rss_mb"`
	Cold           []coldResult  `json:"cold,omitempty"`
	Steady         *steadyResult `json:"steady,omitempty"`
}

// coldSettle is how long the operator runs on after it has looked at
// every object before its writes are counted: writes that would follow
// (there should be none) fall into the count.
const coldSettle = 5 * time.Second

// coldStuck is how long the cold start's count of processing cycles may
// stand still below N before the objects not looked at are reported
// instead of waited for.
const coldStuck = 30 * time.Second

// scale runs the scale scenarios for one contender.
func (d *driver) scale(ctx context.Context, contender string, progress func(string, ...any)) (scaleResult, error) {
	p := pass{Contender: contender, Round: 1}
	progress("%s: N=%d, scenarios %v", contender, d.o.N, d.o.Scenarios)
	r, err := d.start(ctx, p, progress)
	if err != nil {
		return scaleResult{}, fmt.Errorf("%s: %w", contender, err)
	}
	defer r.abort()
	res := scaleResult{Contender: contender, Namespace: r.res.Namespace, N: d.o.N}
	if err := r.phase(ctx, 0); err != nil {
		return res, err
	}
	res.Create, res.ReadyPeakRSSMB = r.res.Phases[0], r.res.ReadyPeakRSSMB
	if slices.Contains(d.o.Scenarios, "coldstart") {
		for _, v := range d.coldVariants(contender) {
			c, err := r.coldStart(ctx, v)
			if err != nil {
				return res, err
			}
			res.Cold = append(res.Cold, c)
		}
	}
	if slices.Contains(d.o.Scenarios, "steady") {
		st, err := r.steady(ctx)
		if err != nil {
			return res, err
		}
		res.Steady = &st
	}
	return res, nil
}

// coldVariant is one way of starting an operator for a cold start: its
// name in the report and the flags it adds.
type coldVariant struct {
	name string
	args []string
}

// coldVariants are the cold starts of contender, the default last.
func (d *driver) coldVariants(contender string) []coldVariant {
	var vs []coldVariant
	if contender == "kopf-wasm" && d.o.ColdKeepManagedFields {
		vs = append(vs, coldVariant{"managedFields kept", []string{"-keep-managed-fields"}})
	}
	if contender == "kopf-wasm" && d.o.ColdList {
		vs = append(vs, coldVariant{"LIST (watchList off)", []string{"-watch-list=false"}})
	}
	return append(vs, coldVariant{name: "default"})
}

// coldStart stops the pass's operator and starts it again with variant's
// flags on the handled objects.
func (r *passRun) coldStart(ctx context.Context, variant coldVariant) (coldResult, error) {
	d := r.d
	c := coldResult{Variant: variant.name}
	if _, err := r.child.stop(30 * time.Second); err != nil {
		r.child = nil
		return c, err
	}
	r.child = nil
	argv, err := d.argv(r.p, r.res.Namespace)
	if err != nil {
		return c, err
	}
	argv = append(argv, variant.args...)
	auditFrom, err := fileSize(d.auditLog)
	if err != nil {
		return c, err
	}
	api0, err := d.apiServerCPU(ctx)
	if err != nil {
		return c, err
	}
	logName := r.p.fileName(fmt.Sprintf("-cold-%d.log", time.Now().Unix()))
	begin := time.Now()
	if r.child, err = startChild(argv, filepath.Join(d.o.WorkDir, logName)); err != nil {
		return c, err
	}
	if err := r.waitLookedAt(ctx, &c, begin); err != nil {
		return c, err
	}
	pid := r.child.cmd.Process.Pid
	cpu, err := procCPU(pid)
	if err != nil {
		return c, err
	}
	api1, err := d.apiServerCPU(ctx)
	if err != nil {
		return c, err
	}
	hwm, err := procHWM(pid)
	if err != nil {
		return c, err
	}
	c.CPUSeconds, c.APIServerCPU = cpu.Seconds(), api1-api0
	c.PeakRSSMB = float64(hwm) / 1024
	c.RSSPerObjectKB = (c.PeakRSSMB - r.res.ReadyPeakRSSMB) * 1024 / float64(d.o.N)
	ops, _, err := d.countWrites(auditFrom, writeFilter{Namespace: r.res.Namespace, Since: begin, Driver: driverAgent})
	if err != nil {
		return c, err
	}
	c.Writes = ops
	live, err := r.child.liveRSS()
	if err != nil {
		return c, err
	}
	c.LiveRSSMB = float64(live) / 1024
	r.progress("%s: cold start (%s): ready in %.2fs, every object looked at in %.2fs (%d cycles); %d writes; CPU %.2fs; peak RSS %.1f MB, live %.1f MB",
		r.p.Contender, c.Variant, c.ReadySeconds, c.LookedAtSeconds, c.Cycles, ops.Total, c.CPUSeconds, c.PeakRSSMB, c.LiveRSSMB)
	return c, nil
}

// waitLookedAt waits until the restarted operator synced and ran a cycle
// for each of the N objects, then coldSettle more.
func (r *passRun) waitLookedAt(ctx context.Context, c *coldResult, begin time.Time) error {
	timeout := time.After(r.d.o.PhaseTimeout)
	select {
	case <-r.child.synced:
		c.ReadySeconds = time.Since(begin).Seconds()
	case <-r.child.exited:
		return r.child.alive()
	case <-timeout:
		return fmt.Errorf("%s: cold start: not synced within %s", r.p, r.d.o.PhaseTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	last, lastChange := int64(-1), time.Now()
	for n := r.child.cycles.Load(); n < int64(r.d.o.N); n = r.child.cycles.Load() {
		if n != last {
			last, lastChange = n, time.Now()
		} else if time.Since(lastChange) > coldStuck {
			// Objects the operator never looked at: reported, not waited for.
			r.progress("%s: cold start: only %d of %d objects looked at, none for %s", r.p, n, r.d.o.N, coldStuck)
			c.LookedAtSeconds = -1
			c.Cycles = n
			return r.child.alive()
		}
		select {
		case <-tick.C:
		case <-r.child.exited:
			return r.child.alive()
		case <-timeout:
			return fmt.Errorf("%s: cold start: %d of %d objects looked at within %s", r.p, r.child.cycles.Load(), r.d.o.N, r.d.o.PhaseTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.LookedAtSeconds = time.Since(begin).Seconds()
	select {
	case <-time.After(coldSettle):
	case <-ctx.Done():
		return ctx.Err()
	}
	c.Cycles = r.child.cycles.Load()
	return r.child.alive()
}

// apiServerCPU reads the API server's CPU seconds so far.
func (d *driver) apiServerCPU(ctx context.Context) (float64, error) {
	m, err := d.scrape(ctx)
	if err != nil {
		return 0, err
	}
	return metricValue(m, "process_cpu_seconds_total"), nil
}
