package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// peakGroups is a process's resident memory at its peak RSS, by kind of
// mapping, in MB: the grouping of the density notebook's first table
// (docs/benchmarks/density.md), read from the smaps a process wrote with
// -peak-dir (profiling.PeakSnapshots). Several processes' add up.
type peakGroups struct {
	// GoHeap is the Go heap's arenas (Go on linux/amd64 places them from
	// 0xc000000000 on): objects, goroutine stacks, free spans.
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

// groupSmaps sums the Rss of a smaps file's mappings by group; binary is
// the process's executable.
func groupSmaps(r io.Reader, binary string) (peakGroups, error) {
	var g peakGroups
	var cur *float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok {
			f := strings.Fields(rest)
			if cur == nil || len(f) == 0 {
				return g, fmt.Errorf("smaps: Rss without a mapping: %q", line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return g, fmt.Errorf("smaps: %q: %w", line, err)
			}
			*cur += float64(kb) / 1024
			g.Total += float64(kb) / 1024
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 || !strings.Contains(f[0], "-") || strings.HasSuffix(f[0], ":") {
			continue // a field line of the current mapping
		}
		start, end, ok := strings.Cut(f[0], "-")
		lo, err1 := strconv.ParseUint(start, 16, 64)
		hi, err2 := strconv.ParseUint(end, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		path := ""
		if len(f) >= 6 {
			path = strings.Join(f[5:], " ")
		}
		cur = g.group(lo, hi, f[1], path, binary)
	}
	return g, sc.Err()
}

// group is the figure a mapping's Rss adds to.
func (g *peakGroups) group(lo, hi uint64, perms, path, binary string) *float64 {
	switch {
	case path == binary:
		return &g.Binary
	case strings.HasPrefix(path, "/memfd:kopf-wasm-memory"):
		return &g.LinearMemories
	case strings.Contains(path, "/wasm-cache"):
		return &g.ModuleFiles
	case path != "":
		return &g.Rest
	case strings.Contains(perms, "x"):
		return &g.CompiledCode
	case lo>>32&0xff == 0xc0:
		return &g.GoHeap
	case hi-lo >= linearMemoryMin:
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
	g, err := groupSmaps(f, binary)
	if err != nil {
		return g, fmt.Errorf("peak snapshot %s: %w", dir, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "runtime.txt"))
	if err != nil {
		return g, fmt.Errorf("peak snapshot: %w", err)
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
