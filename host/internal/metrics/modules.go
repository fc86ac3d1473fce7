package metrics

import (
	"maps"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	moduleLoads = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_module_loads_total",
		Help: "Module versions loaded (at start, from a changed file, a moved tag or a Module resource), by module.",
	}, []string{"module"}))
	moduleSwaps = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_module_swaps_total",
		Help: "Module versions swapped in while the host was serving, by module.",
	}, []string{"module"}))
	moduleFailures = mustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kopf_wasm_module_load_failures_total",
		Help: "Module versions that did not load (the previous version, if any, kept serving), by module or source.",
	}, []string{"module"}))
)

// ModuleLoaded reports a module version that loaded.
func ModuleLoaded(module string) {
	if enabled.Load() {
		moduleLoads.WithLabelValues(module).Inc()
	}
}

// ModuleSwapped reports a module version swapped in while serving.
func ModuleSwapped(module string) {
	if enabled.Load() {
		moduleSwaps.WithLabelValues(module).Inc()
	}
}

// ModuleFailed reports a module version that did not load; module is the
// module's name when known, else its file or reference.
func ModuleFailed(module string) {
	if enabled.Load() {
		moduleFailures.WithLabelValues(module).Inc()
	}
}

// ModuleStats is the state of one loaded module's wasm instances.
type ModuleStats struct {
	Module string
	// Instances are the pooled instances alive; Daemons the instances of
	// daemons (each has its own).
	Instances int
	// MemoryBytes is the linear memory of the pooled instances.
	MemoryBytes int64
	// Recycled counts the pooled instances replaced for their calls or
	// memory (settings.Wasm.RecycleAfterCalls, RecycleAboveBytes).
	Recycled uint64
	// BudgetBytes is the memory of all the module's instances, daemons'
	// too, which its budget bounds (isolation.memoryBytes); BudgetHits
	// counts the growths and instances the budget refused.
	BudgetBytes int64
	BudgetHits  uint64
}

var (
	sourceMu sync.Mutex
	sources  = map[*func() []ModuleStats]bool{}
)

// AddModuleSource adds a function the instance and memory gauges read
// when scraped (a host's current module set), until remove is called.
// The figures of every source are summed by module, so that two hosts of
// one process each report theirs.
func AddModuleSource(f func() []ModuleStats) (remove func()) {
	sourceMu.Lock()
	defer sourceMu.Unlock()
	key := &f
	sources[key] = true
	return func() {
		sourceMu.Lock()
		defer sourceMu.Unlock()
		delete(sources, key)
	}
}

// moduleStats sums the figures of every source by module, in module order.
func moduleStats() []ModuleStats {
	sourceMu.Lock()
	fs := make([]func() []ModuleStats, 0, len(sources))
	for f := range sources {
		fs = append(fs, *f)
	}
	sourceMu.Unlock()
	byModule := map[string]ModuleStats{}
	for _, f := range fs {
		for _, s := range f() {
			sum := byModule[s.Module]
			sum.Module = s.Module
			sum.Instances += s.Instances
			sum.MemoryBytes += s.MemoryBytes
			sum.Recycled += s.Recycled
			sum.BudgetBytes += s.BudgetBytes
			sum.BudgetHits += s.BudgetHits
			byModule[s.Module] = sum
		}
	}
	out := make([]ModuleStats, 0, len(byModule))
	for _, name := range slices.Sorted(maps.Keys(byModule)) {
		out = append(out, byModule[name])
	}
	return out
}

// moduleCollector reads the module source at each scrape.
type moduleCollector struct{}

var (
	instancesDesc = prometheus.NewDesc("kopf_wasm_wasm_instances",
		"Wasm instances alive in a module's pool, by module.", []string{"module"}, nil)
	memoryDesc = prometheus.NewDesc("kopf_wasm_wasm_memory_bytes",
		"Linear memory of a module's pooled wasm instances, by module.", []string{"module"}, nil)
	recycledDesc = prometheus.NewDesc("kopf_wasm_wasm_instances_recycled_total",
		"Pooled wasm instances replaced by fresh ones after wasm.recycleAfterCalls calls or above wasm.recycleAboveBytes of memory, by module (since the module version was loaded).", []string{"module"}, nil)
)

func (moduleCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- instancesDesc
	ch <- memoryDesc
	ch <- recycledDesc
}

func (moduleCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range moduleStats() {
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(s.Instances), s.Module)
		ch <- prometheus.MustNewConstMetric(memoryDesc, prometheus.GaugeValue, float64(s.MemoryBytes), s.Module)
		ch <- prometheus.MustNewConstMetric(recycledDesc, prometheus.CounterValue, float64(s.Recycled), s.Module)
	}
}

func init() { Registry.MustRegister(moduleCollector{}) }
