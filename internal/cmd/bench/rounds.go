package main

import (
	"context"
	"fmt"
	"slices"
)

// The contenders share one control plane, and when a measurement is taken
// changes it. With the native controller three times in a row, the API
// server's CPU per change was 4.53, 4.74 and 5.41 ms, and the third pass's
// phases 12–21 % slower than the first's; compacting and defragmenting
// etcd between passes did not change that (the API server's resident set
// grew from 0.26 to 1.2 GB over the three passes). The first pass of a run
// pays for warming up instead. And this shared machine's speed drifts: in
// one run of identical passes the create phase took 8.5 to 11.4 s, with
// the operator, the API server, etcd and the driver all using up to 30 %
// more CPU for the same work in the slow ones, at no steal time.
//
// So by default an unmeasured pass warms the control plane up first, and
// then every contender runs once per round, their phases interleaved: in
// a round A B, the phases run A.create B.create, B.update A.update,
// A.delete B.delete, and the next round starts with B. Compared phases
// are seconds apart instead of a pass (half a minute and more), every
// phase has each contender first as often as second, and a drift over the
// run costs all contenders alike. The table compares the means.

// pass is one run of one contender.
type pass struct {
	Contender string
	Round     int // from 1; 0 is the warm-up
}

func (p pass) String() string {
	if p.Round == 0 {
		return fmt.Sprintf("%s (warm-up, not measured)", p.Contender)
	}
	return fmt.Sprintf("%s (round %d)", p.Contender, p.Round)
}

// fileName names a file of the pass in the work folder.
func (p pass) fileName(suffix string) string {
	return fmt.Sprintf("%s-%d%s", p.Contender, p.Round, suffix)
}

// schedule lists the rounds: every contender once per round, in the
// given order in odd rounds and reversed in even ones.
func (o benchOptions) schedule() [][]pass {
	var out [][]pass
	for r := 1; r <= o.Rounds; r++ {
		round := make([]pass, 0, len(o.Contenders))
		for _, name := range o.Contenders {
			round = append(round, pass{Contender: name, Round: r})
		}
		if r%2 == 0 {
			slices.Reverse(round)
		}
		out = append(out, round)
	}
	return out
}

// phaseOrder is the order in which a round's passes (in the round's order)
// run their k-th phase: that order for even k, reversed for odd k.
func phaseOrder[T any](passes []T, k int) []T {
	out := slices.Clone(passes)
	if k%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

// round runs the passes of one round with their phases interleaved (see
// phaseOrder) and returns their results, in the round's order.
func (d *driver) round(ctx context.Context, passes []pass, progress func(string, ...any)) (_ []result, err error) {
	var runs []*passRun
	defer func() {
		if err != nil {
			for _, r := range runs {
				r.abort()
			}
		}
	}()
	for _, p := range passes {
		progress("%s: N=%d", p, d.o.N)
		r, err := d.start(ctx, p, progress)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		runs = append(runs, r)
	}
	for k := range phaseCount {
		for _, r := range phaseOrder(runs, k) {
			if err := r.phase(ctx, k); err != nil {
				return nil, err
			}
		}
	}
	out := make([]result, 0, len(runs))
	for _, r := range runs {
		res, err := r.finish()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.p, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// combinePasses combines each contender's passes into one result, in the order
// of contenders: phase times, ready time and the API server's CPU are
// means; writes, CPU and changes are sums (so the per-change figures are
// over all passes); the peaks are the highest.
func combinePasses(results []result, contenders []string) []result {
	var out []result
	for _, name := range contenders {
		var sum result
		n := 0
		for _, res := range results {
			if res.Contender != name {
				continue
			}
			if n == 0 {
				sum = result{Contender: name, N: res.N, Phases: make([]phaseResult, len(res.Phases))}
				for i, p := range res.Phases {
					sum.Phases[i].Name = p.Name
				}
			}
			n++
			addResult(&sum, res)
		}
		if n == 0 {
			continue
		}
		sum.Passes = n
		for i := range sum.Phases {
			sum.Phases[i].Seconds /= float64(n)
			sum.Phases[i].SentSeconds /= float64(n)
			sum.Phases[i].CPU = sum.Phases[i].CPU.scale(1 / float64(n))
		}
		sum.ReadySeconds /= float64(n)
		sum.APIServerCPUPerChangeMs /= float64(n)
		if sum.Changes > 0 {
			sum.WritesPerChange = float64(sum.Writes.Total) / float64(sum.Changes)
			sum.CPUPerChangeMs = sum.CPUSeconds * 1000 / float64(sum.Changes)
		}
		out = append(out, sum)
	}
	return out
}

// addResult adds one pass into the running sums of combinePasses.
func addResult(sum *result, res result) {
	for i := range min(len(sum.Phases), len(res.Phases)) {
		sum.Phases[i].Seconds += res.Phases[i].Seconds
		sum.Phases[i].SentSeconds += res.Phases[i].SentSeconds
		sum.Phases[i].CPU = sum.Phases[i].CPU.add(res.Phases[i].CPU)
	}
	sum.Changes += res.Changes
	sum.ReadySeconds += res.ReadySeconds
	sum.Writes.merge(res.Writes)
	sum.DriverWrites += res.DriverWrites
	sum.MetricsWrites += res.MetricsWrites
	sum.CPUSeconds += res.CPUSeconds
	sum.StartupCPUSeconds += res.StartupCPUSeconds
	sum.TotalCPUSeconds += res.TotalCPUSeconds
	sum.APIServerCPUPerChangeMs += res.APIServerCPUPerChangeMs
	sum.PeakRSSMB = max(sum.PeakRSSMB, res.PeakRSSMB)
	sum.ReadyPeakRSSMB = max(sum.ReadyPeakRSSMB, res.ReadyPeakRSSMB)
}
