package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// result is the measurements of one pass of a contender, or of all its
// passes combined (see combinePasses).
type result struct {
	Contender string `json:"contender"`
	// Round is the pass's round; Passes, in a combined result, how many
	// passes it combines.
	Round     int           `json:"round,omitempty"`
	Passes    int           `json:"passes,omitempty"`
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
	N             int    `json:"n"`
	Concurrency   int    `json:"concurrency"`
	NativeWorkers int    `json:"native_workers"`
	Go            string `json:"go"`
	Server        string `json:"server"`
	Machine       string `json:"machine"`
	Rounds        int    `json:"rounds"`
	// Results has one entry per pass, in the order run; Summary one per
	// contender, its passes combined.
	Results []result `json:"results"`
	Summary []result `json:"summary"`
}

// columns are the results the table compares: the combined ones when
// there are any.
func (r report) columns() []result {
	if len(r.Summary) > 0 {
		return r.Summary
	}
	return r.Results
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
		if cols := r.columns(); len(cols) > 0 && i < len(cols[0].Phases) {
			name = cols[0].Phases[i].Name
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
		row{label: "RSS per object (KB)", format: "%.2f", target: 1.0, ratio: true, value: rssPerObjectKB},
		row{label: "API server CPU per change (ms)", format: "%.3f", value: func(res result) float64 { return res.APIServerCPUPerChangeMs }},
	)
}

// rssPerObjectKB is what the phases added to the operator's peak RSS over
// its peak before them (start-up and canary), per object, KiB.
func rssPerObjectKB(res result) float64 {
	if res.N <= 0 {
		return 0
	}
	return (res.PeakRSSMB - res.ReadyPeakRSSMB) * 1024 / float64(res.N)
}

func (r report) find(name string) (result, bool) {
	for _, res := range r.columns() {
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
	fmt.Fprintf(w, "%s; %s; %s\n", r.Machine, r.Go, r.Server)
	if len(r.Summary) > 0 && r.Rounds > 1 {
		fmt.Fprintf(w, "%d rounds, the order reversed in every other one; the columns are the means of %d passes each\n",
			r.Rounds, r.Summary[0].Passes)
	}
	fmt.Fprintln(w)
	wasm, hasWasm := r.find("kopf-wasm")
	native, hasNative := r.find("native")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{""}
	for _, res := range r.columns() {
		head = append(head, res.Contender)
	}
	if hasWasm {
		head = append(head, "kopf-wasm/native", "target", "met")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, rw := range r.rows() {
		cells := []string{rw.label}
		for _, res := range r.columns() {
			cells = append(cells, fmt.Sprintf(rw.format, rw.value(res)))
		}
		if hasWasm {
			cells = append(cells, verdict(rw, wasm, native, hasNative)...)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	r.pythonRatios(w)
	r.passes(w)
	r.roundRatios(w)
}

// passes prints each pass's details, in the order run.
func (r report) passes(w io.Writer) {
	for _, res := range r.Results {
		name := res.Contender
		if res.Round > 0 {
			name = pass{Contender: res.Contender, Round: res.Round}.String()
		}
		fmt.Fprintf(w, "%s: writes %s; CPU %.3f ms per change, %.2fs in the phases, %.2fs before (start-up, canary), %.2fs in all; "+
			"API server CPU %.3f ms per change; ready in %.1fs with a peak RSS of %.1f MB, %.1f MB at the end\n",
			name, res.Writes, res.CPUPerChangeMs, res.CPUSeconds, res.StartupCPUSeconds, res.TotalCPUSeconds,
			res.APIServerCPUPerChangeMs, res.ReadySeconds, res.ReadyPeakRSSMB, res.PeakRSSMB)
		for _, p := range res.Phases {
			fmt.Fprintf(w, "  %s phase %.2fs: the driver's requests took %.2fs; CPU seconds: operator %.2f, API server %.2f, etcd %.2f, driver %.2f, other processes %.2f\n",
				p.Name, p.Seconds, p.SentSeconds, p.CPU.Operator, p.CPU.APIServer, p.CPU.Etcd, p.CPU.Driver, p.CPU.Others())
		}
	}
}

// roundRatios prints kopf-wasm's phase times against the native
// controller's in each round alone, to show the spread the means hide.
func (r report) roundRatios(w io.Writer) {
	byRound := map[int]map[string]result{}
	for _, res := range r.Results {
		if res.Round == 0 {
			return
		}
		if byRound[res.Round] == nil {
			byRound[res.Round] = map[string]result{}
		}
		byRound[res.Round][res.Contender] = res
	}
	for round := 1; round <= len(byRound); round++ {
		wasm, ok1 := byRound[round]["kopf-wasm"]
		native, ok2 := byRound[round]["native"]
		if !ok1 || !ok2 || len(wasm.Phases) != len(native.Phases) {
			continue
		}
		first := "kopf-wasm"
		for _, res := range r.Results {
			if res.Round == round {
				first = res.Contender
				break
			}
		}
		parts := make([]string, len(wasm.Phases))
		for i := range wasm.Phases {
			parts[i] = fmt.Sprintf("%s %.2f×", wasm.Phases[i].Name, wasm.Phases[i].Seconds/native.Phases[i].Seconds)
		}
		fmt.Fprintf(w, "round %d alone (%s first): kopf-wasm/native %s\n", round, first, strings.Join(parts, ", "))
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
