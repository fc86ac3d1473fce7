package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// peakGroups is a process's resident memory at its peak RSS, by kind of
// mapping, in MB: the grouping of the density notebook's first table
// (docs/benchmarks/density.md), read from the smaps a process wrote with
// -peak-dir (profiling.PeakSnapshots). Several processes' add up.
type peakGroups struct {
	// GoHeap is the Go heap's arenas (goHeapMappings): objects, goroutine
	// stacks, free spans.
	GoHeap float64 `json:"go_heap"`
	// CompiledCode is wazero's compiled module code (anonymous, executable).
	CompiledCode float64 `json:"compiled_code"`
	// LinearMemories is the wasm instances' memories: anonymous
	// reservations of 64 MiB and more, and mappings of a pre-initialised
	// module's memory image (memfd, host/internal/wasmrt/image.go).
	LinearMemories float64 `json:"linear_memories"`
	// ModuleFiles is compile-cache files mapped (wasm-cache folders).
	ModuleFiles float64 `json:"module_files"`
	// Binary is the executable's text and data.
	Binary float64 `json:"binary"`
	// Rest is everything else: the Go runtime's other mappings, thread
	// stacks, libc, the vdso.
	Rest float64 `json:"rest"`
	// Total is the RSS of every mapping, the VmRSS at the snapshot.
	Total float64 `json:"total"`
	// HeapObjects is the Go heap's live and not yet swept objects, and
	// Goroutines the goroutines, at the snapshot (runtime.txt).
	HeapObjects float64 `json:"heap_objects"`
	Goroutines  int     `json:"goroutines"`
}

// add adds q's figures to g.
func (g *peakGroups) add(q peakGroups) {
	g.GoHeap += q.GoHeap
	g.CompiledCode += q.CompiledCode
	g.LinearMemories += q.LinearMemories
	g.ModuleFiles += q.ModuleFiles
	g.Binary += q.Binary
	g.Rest += q.Rest
	g.Total += q.Total
	g.HeapObjects += q.HeapObjects
	g.Goroutines += q.Goroutines
}

// linearMemoryMin is the smallest anonymous mapping taken for a linear
// memory (wasmrt reserves a memory's maximum, 64 MiB and more).
const linearMemoryMin = 64 << 20

// mapping is one mapping of a smaps file.
type mapping struct {
	lo, hi      uint64
	perms, path string
	rss         float64 // MiB
}

// groupSmaps sums the Rss of a smaps file's mappings by group; binary is
// the process's executable, heapAddress an address in its Go heap.
func groupSmaps(r io.Reader, binary string, heapAddress uint64) (peakGroups, error) {
	ms, err := readSmaps(r)
	if err != nil {
		return peakGroups{}, err
	}
	heap := goHeapMappings(ms, heapAddress)
	var g peakGroups
	for i, m := range ms {
		*g.group(m, heap[i], binary) += m.rss
		g.Total += m.rss
	}
	return g, nil
}

// readSmaps reads the mappings and their Rss.
func readSmaps(r io.Reader) ([]mapping, error) {
	var ms []mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok {
			f := strings.Fields(rest)
			if len(ms) == 0 || len(f) == 0 {
				return nil, fmt.Errorf("smaps: Rss without a mapping: %q", line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("smaps: %q: %w", line, err)
			}
			ms[len(ms)-1].rss += float64(kb) / 1024
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 || strings.HasSuffix(f[0], ":") {
			continue // a field line of the current mapping
		}
		start, end, ok := strings.Cut(f[0], "-")
		lo, err1 := strconv.ParseUint(start, 16, 64)
		hi, err2 := strconv.ParseUint(end, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		m := mapping{lo: lo, hi: hi, perms: f[1]}
		if len(f) >= 6 {
			m.path = strings.Join(f[5:], " ")
		}
		ms = append(ms, m)
	}
	return ms, sc.Err()
}

// goHeapMappings marks the Go heap's arenas: the run of adjacent
// anonymous mappings, mapped (rw-p) or reserved (---p), around the
// mapping that holds heapAddress (Go reserves its heap in 64 MiB arenas
// from a base that Go 1.26 randomises, and maps them as it grows).
func goHeapMappings(ms []mapping, heapAddress uint64) []bool {
	heap := make([]bool, len(ms))
	arenaLike := func(i int) bool { return ms[i].path == "" && (ms[i].perms == "rw-p" || ms[i].perms == "---p") }
	at := slices.IndexFunc(ms, func(m mapping) bool { return m.lo <= heapAddress && heapAddress < m.hi })
	if at < 0 || !arenaLike(at) {
		return heap
	}
	heap[at] = true
	for i := at - 1; i >= 0 && arenaLike(i) && ms[i].hi == ms[i+1].lo; i-- {
		heap[i] = true
	}
	for i := at + 1; i < len(ms) && arenaLike(i) && ms[i].lo == ms[i-1].hi; i++ {
		heap[i] = true
	}
	return heap
}

// group is the figure a mapping's Rss adds to.
func (g *peakGroups) group(m mapping, goHeap bool, binary string) *float64 {
	switch {
	case m.path == binary:
		return &g.Binary
	case strings.HasPrefix(m.path, "/memfd:kopf-wasm-memory"):
		return &g.LinearMemories
	case strings.Contains(m.path, "/wasm-cache"):
		return &g.ModuleFiles
	case m.path != "":
		return &g.Rest
	case goHeap:
		return &g.GoHeap
	case strings.Contains(m.perms, "x"):
		return &g.CompiledCode
	case m.hi-m.lo >= linearMemoryMin:
		return &g.LinearMemories
	}
	return &g.Rest
}

// readPeak groups the smaps a process with -peak-dir left in dir and adds
// the heap objects and goroutines of its runtime.txt.
func readPeak(dir, binary string) (peakGroups, error) {
	f, err := os.Open(filepath.Join(dir, "smaps"))
	if err != nil {
		return peakGroups{}, fmt.Errorf("peak snapshot: %w", err)
	}
	defer f.Close()
	data, err := os.ReadFile(filepath.Join(dir, "runtime.txt"))
	if err != nil {
		return peakGroups{}, fmt.Errorf("peak snapshot: %w", err)
	}
	var heapAddress uint64
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "heap-address 0x"); ok {
			heapAddress, _ = strconv.ParseUint(rest, 16, 64)
		}
	}
	g, err := groupSmaps(f, binary, heapAddress)
	if err != nil {
		return g, fmt.Errorf("peak snapshot %s: %w", dir, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "/memory/classes/heap/objects:bytes":
			g.HeapObjects, _ = strconv.ParseFloat(f[1], 64) // MiB, as the rest
		case "/sched/goroutines:goroutines":
			g.Goroutines, _ = strconv.Atoi(f[1])
		}
	}
	return g, nil
}

// readPeaks adds up the peaks of the processes argvs started in namespace.
func readPeaks(workDir, namespace string, argvs [][]string) (*peakGroups, error) {
	var sum peakGroups
	for i, argv := range argvs {
		g, err := readPeak(peakDir(workDir, namespace, i), argv[0])
		if err != nil {
			return nil, err
		}
		sum.add(g)
	}
	return &sum, nil
}
