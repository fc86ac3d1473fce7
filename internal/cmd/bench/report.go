package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// result is one contender's measurements.
type result struct {
	Contender string        `json:"contender"`
	Namespace string        `json:"namespace"`
	N         int           `json:"n"`
	Changes   int           `json:"changes"` // 3N: each object created, updated, deleted
	Phases    []phaseResult `json:"phases"`
	// ReadySeconds is from the operator's start until it handled the canary.
	ReadySeconds float64 `json:"ready_seconds"`

	// Writes are the operator's write requests during the phases, from the
	// audit log; WritesPerChange is Writes.Total / Changes.
	Writes          writeCount `json:"writes"`
	WritesPerChange float64    `json:"writes_per_change"`
	// DriverWrites should be Changes.
	DriverWrites int `json:"driver_writes"`
	// MetricsWrites cross-checks Writes from apiserver_request_total
	// (kopfexamples and events, the driver's writes subtracted).
	MetricsWrites float64 `json:"metrics_writes"`

	// CPUSeconds is the operator's CPU time during the phases;
	// StartupCPUSeconds before them (start-up and canary);
	// TotalCPUSeconds its whole life (from wait4).
	CPUSeconds        float64 `json:"cpu_seconds"`
	CPUPerChangeMs    float64 `json:"cpu_per_change_ms"`
	StartupCPUSeconds float64 `json:"startup_cpu_seconds"`
	TotalCPUSeconds   float64 `json:"total_cpu_seconds"`
	// APIServerCPUPerChangeMs is the API server's CPU time during the
	// phases (its process_cpu_seconds_total) per change: the driver's
	// requests, the same for both contenders, and the operator's. No
	// target; it tells how much of a phase's time the operator's requests
	// cost the server.
	APIServerCPUPerChangeMs float64 `json:"apiserver_cpu_per_change_ms"`
	// PeakRSSMB is the operator's peak resident set over its whole life,
	// MiB; ReadyPeakRSSMB the peak before the phases (start-up, canary).
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	ReadyPeakRSSMB float64 `json:"ready_peak_rss_mb"`
}

// report is the whole run.
type report struct {
	N             int      `json:"n"`
	Concurrency   int      `json:"concurrency"`
	NativeWorkers int      `json:"native_workers"`
	Go            string   `json:"go"`
	Server        string   `json:"server"`
	Machine       string   `json:"machine"`
	Results       []result `json:"results"`
}

// row is one line of the table: how to read a value from a result, and the
// target for kopf-wasm (relative to the native controller's value when
// ratio is set, absolute otherwise).
type row struct {
	label  string
	format string
	value  func(result) float64
	target float64 // 0: no target, the row informs
	ratio  bool
}

func (r report) rows() []row {
	rows := []row{}
	for i := range 3 {
		name := "phase"
		if len(r.Results) > 0 && i < len(r.Results[0].Phases) {
			name = r.Results[0].Phases[i].Name
		}
		rows = append(rows, row{label: name + " phase (s)", format: "%.2f", target: 1.1, ratio: true,
			value: func(res result) float64 {
				if i < len(res.Phases) {
					return res.Phases[i].Seconds
				}
				return 0
			}})
	}
	return append(rows,
		row{label: "writes per change", format: "%.3f", target: 1.34, value: func(res result) float64 { return res.WritesPerChange }},
		row{label: "CPU per change (ms)", format: "%.3f", target: 1.3, ratio: true, value: func(res result) float64 { return res.CPUPerChangeMs }},
		row{label: "peak RSS (MB)", format: "%.1f", target: 100, value: func(res result) float64 { return res.PeakRSSMB }},
		row{label: "API server CPU per change (ms)", format: "%.3f", value: func(res result) float64 { return res.APIServerCPUPerChangeMs }},
	)
}

func (r report) find(name string) (result, bool) {
	for _, res := range r.Results {
		if res.Contender == name {
			return res, true
		}
	}
	return result{}, false
}

// table prints the setup, one column per contender, and for kopf-wasm
// against the native controller the ratio, the target and whether it is met.
func (r report) table(w io.Writer) {
	fmt.Fprintf(w, "kopfexamples workload: N=%d (%d changes), driver concurrency %d, native workers %d\n",
		r.N, 3*r.N, r.Concurrency, r.NativeWorkers)
	fmt.Fprintf(w, "%s; %s; %s\n\n", r.Machine, r.Go, r.Server)
	wasm, hasWasm := r.find("kopf-wasm")
	native, hasNative := r.find("native")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{""}
	for _, res := range r.Results {
		head = append(head, res.Contender)
	}
	if hasWasm {
		head = append(head, "kopf-wasm/native", "target", "met")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, rw := range r.rows() {
		cells := []string{rw.label}
		for _, res := range r.Results {
			cells = append(cells, fmt.Sprintf(rw.format, rw.value(res)))
		}
		if hasWasm {
			cells = append(cells, verdict(rw, wasm, native, hasNative)...)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for _, res := range r.Results {
		fmt.Fprintf(w, "%s: writes %s; CPU %.2fs in the phases, %.2fs before (start-up, canary), %.2fs in all; "+
			"ready in %.1fs with a peak RSS of %.1f MB\n",
			res.Contender, res.Writes, res.CPUSeconds, res.StartupCPUSeconds, res.TotalCPUSeconds, res.ReadySeconds, res.ReadyPeakRSSMB)
		for _, p := range res.Phases {
			fmt.Fprintf(w, "  %s phase: the driver's requests took %.2fs of %.2fs\n", p.Name, p.SentSeconds, p.Seconds)
		}
	}
}

// verdict is the ratio, target and met cells of a row for kopf-wasm.
func verdict(rw row, wasm, native result, hasNative bool) []string {
	v := rw.value(wasm)
	ratio := "-"
	if hasNative && rw.value(native) > 0 {
		ratio = fmt.Sprintf("%.2f", v/rw.value(native))
	}
	if rw.target == 0 {
		return []string{ratio, "-", "-"}
	}
	if rw.ratio {
		if !hasNative || rw.value(native) <= 0 {
			return []string{ratio, fmt.Sprintf("≤ %.1f×", rw.target), "?"}
		}
		return []string{ratio, fmt.Sprintf("≤ %.1f×", rw.target), yesNo(v <= rw.target*rw.value(native))}
	}
	return []string{ratio, "≤ " + fmt.Sprintf(rw.format, rw.target), yesNo(v <= rw.target)}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}
