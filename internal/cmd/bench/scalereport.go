package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
)

// scaleReport is a run of the coldstart and steady scenarios.
type scaleReport struct {
	N         int           `json:"n"`
	Scenarios []string      `json:"scenarios"`
	Go        string        `json:"go"`
	Server    string        `json:"server"`
	Machine   string        `json:"machine"`
	Results   []scaleResult `json:"results"`
}

// runScale runs the scale scenarios for each contender in turn and
// prints the report.
func (d *driver) runScale(ctx context.Context, stdout io.Writer, progress func(string, ...any)) error {
	rep := scaleReport{N: d.o.N, Scenarios: d.o.Scenarios, Go: runtime.Version(), Server: d.serverVersion(ctx), Machine: machine()}
	for _, name := range d.o.Contenders {
		res, err := d.scale(ctx, name, progress)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res)
	}
	if d.o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.table(stdout)
	return nil
}

// table prints one column per contender (and per cold-start variant).
func (r scaleReport) table(w io.Writer) {
	fmt.Fprintf(w, "scale scenarios %s: N=%d\n%s; %s; %s\n\n", strings.Join(r.Scenarios, ", "), r.N, r.Machine, r.Go, r.Server)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, cells ...string) { fmt.Fprintln(tw, label+"\t"+strings.Join(cells, "\t")+"\t") }
	var head []string
	for _, res := range r.Results {
		head = append(head, res.Contender)
	}
	row("", head...)
	row("create phase (s)", r.cells(func(s scaleResult) string { return fmt.Sprintf("%.2f", s.Create.Seconds) })...)
	row("create: CPU per change (ms)", r.cells(func(s scaleResult) string {
		return fmt.Sprintf("%.3f", s.Create.CPU.Operator*1000/float64(max(s.N, 1)))
	})...)
	row("peak RSS before the objects (MB)", r.cells(func(s scaleResult) string { return fmt.Sprintf("%.1f", s.ReadyPeakRSSMB) })...)
	_ = tw.Flush()
	for _, res := range r.Results {
		for _, c := range res.Cold {
			fmt.Fprintf(w, "cold start %s (%s): ready %.2fs, every object looked at %.2fs (%d cycles), writes %d (%s), "+
				"CPU %.2fs, API server CPU %.2fs, peak RSS %.1f MB (%.1f KB per object above the first start's %.1f MB), live RSS after a GC %.1f MB\n",
				res.Contender, c.Variant, c.ReadySeconds, c.LookedAtSeconds, c.Cycles, c.Writes.Total, c.Writes,
				c.CPUSeconds, c.APIServerCPU, c.PeakRSSMB, c.RSSPerObjectKB, res.ReadyPeakRSSMB, c.LiveRSSMB)
		}
	}
	for _, res := range r.Results {
		if s := res.Steady; s != nil {
			fmt.Fprintf(w, "steady %s: %.0f changes/s for %.0fs: %d sent, %d handled, %d superseded; latency p50 %.0f ms, p90 %.0f ms, "+
				"p99 %.0f ms, max %.0f ms (driver lag max %.0f ms); CPU %.3f ms per change, writes %.3f per change (%s), "+
				"API server CPU %.3f ms per change; peak RSS %.1f MB\n",
				res.Contender, s.Rate, s.Duration, s.Sent, s.Handled, s.Superseded, s.P50Ms, s.P90Ms, s.P99Ms, s.MaxMs,
				s.DriverLagMaxMs, s.CPUPerChangeMs, s.WritesPerChange, s.Writes, s.APIServerCPUPerChangeMs, s.PeakRSSMB)
		}
	}
}

func (r scaleReport) cells(f func(scaleResult) string) []string {
	out := make([]string, len(r.Results))
	for i, res := range r.Results {
		out[i] = f(res)
	}
	return out
}
