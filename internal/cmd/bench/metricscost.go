package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// The subcommand "metrics-cost" measures what metrics cost the operator:
// the workload bench with two kopf-wasm contenders side by side, in
// alternating rounds of one run (rounds.go), so that the ratio of their
// CPU per change is taken seconds apart on the same control plane:
//
//	go run ./internal/cmd/bench metrics-cost -n 2000 -rounds 6
//
// kopf-wasm-scraped records metrics and has /metrics read every 5 s (the
// issue's setup); kopf-wasm-nometrics records none (benchoperator
// -metrics=false, as `kopf-wasm run` without --metrics-bind-address). It
// takes the bench's flags (but -contenders and -json) and prints the
// ratio of each round and their spread.
const metricsCostCommand = "metrics-cost"

// The two contenders of metrics-cost.
const (
	metricsOn  = "kopf-wasm-scraped"
	metricsOff = "kopf-wasm-nometrics"
)

// runMetricsCost is the metrics-cost command.
func runMetricsCost(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-"); name == "contenders" || name == "json" {
			return fmt.Errorf("%s: -%s is set by the command", metricsCostCommand, name)
		}
	}
	var out bytes.Buffer
	if err := runBench(ctx, append(slices.Clone(args), "-contenders", metricsOn+","+metricsOff, "-json"), &out, stderr); err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("reading the bench's report: %w", err)
	}
	metricsCost(rep).print(stdout, rep, loadAverage())
	return nil
}

// costReport is the operator's CPU per change with metrics over without,
// per round and combined.
type costReport struct {
	// Rounds are the ratios of each round, in the order run.
	Rounds []roundCost
	// Combined is the ratio of the CPU per change over all passes.
	Combined float64
	// Mean, SD, Min and Max describe the rounds' ratios.
	Mean, SD, Min, Max float64
}

// roundCost is one round's figures.
type roundCost struct {
	Round       int
	First       string  // the contender that ran its create phase first
	On, Off     float64 // CPU per change, ms
	Ratio       float64 // On / Off
	PhaseRatios []float64
}

// metricsCost works out the ratios from a bench report of the two
// contenders; rounds missing either are left out.
func metricsCost(rep report) costReport {
	var c costReport
	byRound := map[int]map[string]result{}
	var order []int
	first := map[int]string{}
	for _, res := range rep.Results {
		if byRound[res.Round] == nil {
			byRound[res.Round] = map[string]result{}
			order = append(order, res.Round)
			first[res.Round] = res.Contender
		}
		byRound[res.Round][res.Contender] = res
	}
	for _, r := range order {
		on, ok1 := byRound[r][metricsOn]
		off, ok2 := byRound[r][metricsOff]
		if r == 0 || !ok1 || !ok2 || off.CPUPerChangeMs <= 0 {
			continue
		}
		rc := roundCost{Round: r, First: first[r], On: on.CPUPerChangeMs, Off: off.CPUPerChangeMs,
			Ratio: on.CPUPerChangeMs / off.CPUPerChangeMs}
		for i := range min(len(on.Phases), len(off.Phases)) {
			rc.PhaseRatios = append(rc.PhaseRatios, ratio(on.Phases[i].CPU.Operator, off.Phases[i].CPU.Operator))
		}
		c.Rounds = append(c.Rounds, rc)
	}
	var on, off result
	for _, res := range rep.Summary {
		switch res.Contender {
		case metricsOn:
			on = res
		case metricsOff:
			off = res
		}
	}
	c.Combined = ratio(on.CPUPerChangeMs, off.CPUPerChangeMs)
	ratios := make([]float64, len(c.Rounds))
	for i, rc := range c.Rounds {
		ratios[i] = rc.Ratio
	}
	c.Mean, c.SD, c.Min, c.Max = spread(ratios)
	return c
}

// ratio is a/b, 0 when b is not above 0.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// spread is the mean, sample standard deviation, minimum and maximum of xs
// (zeros when empty; the deviation 0 for one value).
func spread(xs []float64) (mean, sd, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	lo, hi = slices.Min(xs), slices.Max(xs)
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return mean, sd, lo, hi
}

// print writes the setup, each round's ratio and their spread.
func (c costReport) print(w io.Writer, rep report, load string) {
	fmt.Fprintf(w, "metrics cost: kopfexamples workload, N=%d (%d changes) per pass, %d rounds; %s; %s; %s\n",
		rep.N, 3*rep.N, rep.Rounds, rep.Machine, rep.Go, rep.Server)
	fmt.Fprintf(w, "%s = metrics recorded, /metrics read every 5 s; %s = no metrics recorded; load average at the end: %s\n\n",
		metricsOn, metricsOff, load)
	for _, rc := range c.Rounds {
		phases := make([]string, len(rc.PhaseRatios))
		for i, p := range rc.PhaseRatios {
			phases[i] = fmt.Sprintf("%.3f", p)
		}
		fmt.Fprintf(w, "round %d (%s first): CPU per change %.3f vs %.3f ms, ratio %.3f (phases %s)\n",
			rc.Round, rc.First, rc.On, rc.Off, rc.Ratio, strings.Join(phases, ", "))
	}
	fmt.Fprintf(w, "\nCPU per change with metrics / without: %.3f over all passes; per round mean %.3f, SD %.3f, min %.3f, max %.3f (%d rounds)\n",
		c.Combined, c.Mean, c.SD, c.Min, c.Max, len(c.Rounds))
	fmt.Fprintf(w, "target ≤ 1.03: %s\n", c.verdict())
	for _, res := range rep.Summary {
		fmt.Fprintf(w, "%s: peak RSS %.1f MB, %.3f writes per change, CPU per change %.3f ms over %d passes\n",
			res.Contender, res.PeakRSSMB, res.WritesPerChange, res.CPUPerChangeMs, res.Passes)
	}
}

// verdict says whether the target (3 % more CPU at most) is met, and
// whether the rounds' spread allows telling.
func (c costReport) verdict() string {
	switch {
	case len(c.Rounds) == 0:
		return "no complete round"
	case c.Max <= 1.03:
		return "met in every round"
	case c.Mean <= 1.03 && c.SD > 0.03:
		return fmt.Sprintf("met on average, but the rounds spread more than 3 %% (SD %.1f %%)", c.SD*100)
	case c.Mean <= 1.03:
		return "met on average"
	}
	return "NOT met"
}

// loadAverage is the machine's 1, 5 and 15 minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
