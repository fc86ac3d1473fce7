package main

import "fmt"

// The contenders share one control plane, and a pass's place in the run
// changes its figures. With the native controller three times in a row,
// the API server's CPU per change was 4.53, 4.74 and 5.41 ms, and the
// third pass's phases 12–21 % slower than the first's; compacting and
// defragmenting etcd between passes did not change that (the API server's
// resident set grew from 0.26 to 1.2 GB over the three passes). The first
// pass of a run pays for warming up instead. With one pass each, the
// order alone moved the ratios by 5–10 %. So every contender runs twice by
// default, in the order A B B A, and the table compares the means: a
// drift over the run costs both contenders alike.

// pass is one run of one contender.
type pass struct {
	Contender string
	Round     int // from 1
}

func (p pass) String() string { return fmt.Sprintf("%s (round %d)", p.Contender, p.Round) }

// fileName names a file of the pass in the work folder.
func (p pass) fileName(suffix string) string {
	return fmt.Sprintf("%s-%d%s", p.Contender, p.Round, suffix)
}

// schedule lists the passes: every contender once per round, in the given
// order in odd rounds and reversed in even ones.
func (o benchOptions) schedule() []pass {
	var out []pass
	for r := 1; r <= o.Rounds; r++ {
		for i := range o.Contenders {
			name := o.Contenders[i]
			if r%2 == 0 {
				name = o.Contenders[len(o.Contenders)-1-i]
			}
			out = append(out, pass{Contender: name, Round: r})
		}
	}
	return out
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
