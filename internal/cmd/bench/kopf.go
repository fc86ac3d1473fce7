package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The Python contenders (issue 30): kopf-wasm running the Python
// kopfexample module (examples/python/kopfexample, built with `kopf-wasm
// build`), and Kopf itself running the very same file with Debian's
// python3 and Debian's packages (python3-aiohttp, python3-pythonjsonlogger,
// python3-iso8601, python3-click, python3-typing-extensions, python3-yaml,
// python3-jsonpatch). Kopf's source is not part of this repository: the
// benchmark takes a plain extract of its 1.44.6 tag (-kopf-source).
const (
	pythonContender = "kopf-wasm-python"
	kopfContender   = "kopf"
	// pythonExample is the Python kopfexample, relative to the repository.
	pythonExample = "examples/python/kopfexample"
	// kopfVersion is the Kopf release the benchmark is written for.
	kopfVersion = "1.44.6"
)

// kopfVersionsFile is what setuptools-scm writes into an installed Kopf
// (kopf/_cogs/helpers/versions.py) and a source extract lacks: `import
// kopf` needs it.
const kopfVersionsFile = `# Written by the kopf-wasm benchmark (setuptools-scm writes it on install).
__version__ = version = '` + kopfVersion + `'
__version_tuple__ = version_tuple = (1, 44, 6)
__commit_id__ = commit_id = None
`

// sourcePatch replaces one line of a file of Kopf's source.
type sourcePatch struct {
	file     string // relative to the source folder
	old, new string
}

// kopfPatches are applied to the extracted source, once: each old line is
// replaced by its new one, and a file already patched is left alone.
var kopfPatches = []sourcePatch{
	// Click 8.2 takes an Enum as the choices of click.Choice; Debian's
	// click 8.1 fails on it ('LogFormat' object has no attribute
	// 'casefold') before Kopf starts. The same choices by name, turned
	// into the Enum as click 8.2 does.
	{file: "kopf/cli.py",
		old: `@click.option('--log-format', type=click.Choice(loggers.LogFormat, case_sensitive=False), default='full')`,
		new: `@click.option('--log-format', type=click.Choice([f.name.lower() for f in loggers.LogFormat], case_sensitive=False), default='full', callback=lambda ctx, param, value: loggers.LogFormat[value.upper()])`},
	// aiohttp takes a session-wide proxy= from 3.10 on; Debian's 3.8
	// fails on it (ClientSession.__init__() got an unexpected keyword
	// argument 'proxy') at Kopf's first request. The benchmark uses no
	// proxy: the argument goes.
	{file: "kopf/_cogs/clients/auth.py",
		old: `                    proxy=info.proxy_url,`,
		new: `                    # proxy=info.proxy_url,  # aiohttp 3.10+ only; Debian has 3.8`},
}

// buildPython builds the Python kopfexample module into workDir with
// `kopf-wasm build`, unless *module names a prebuilt one.
func buildPython(ctx context.Context, root, workDir string, module *string, progress func(string, ...any)) error {
	if *module == "" {
		*module = filepath.Join(workDir, "py-kopfexample.wasm")
		progress("building %s", *module)
		cmd := exec.CommandContext(ctx, "go", "run", "./cmd/kopf-wasm", "build", pythonExample, "-o", *module)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the Python kopfexample module: %w\n%s", err, out)
		}
	}
	if _, err := os.Stat(*module); err != nil {
		return fmt.Errorf("prebuilt Python module: %w", err)
	}
	return nil
}

// prepareKopf checks that source holds Kopf's source and the Python that
// runs it can import it, writing the version file and applying
// kopfPatches first.
func prepareKopf(ctx context.Context, source, python string) error {
	if _, err := os.Stat(filepath.Join(source, "kopf", "__init__.py")); err != nil {
		return fmt.Errorf("-kopf-source: no Kopf source in %s; extract Kopf %s there: "+
			"git --git-dir=<a clone of github.com/nolar/kopf> archive %s | tar -x -C %s", source, kopfVersion, kopfVersion, source)
	}
	versions := filepath.Join(source, "kopf", "_cogs", "helpers", "versions.py")
	if _, err := os.Stat(versions); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(versions, []byte(kopfVersionsFile), 0o644); err != nil {
			return fmt.Errorf("-kopf-source: %w", err)
		}
	}
	for _, p := range kopfPatches {
		if err := p.apply(source); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, python, "-c", "import kopf")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+source, "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("-kopf-python %s cannot import Kopf from %s (apt-get install python3-aiohttp python3-pythonjsonlogger "+
			"python3-iso8601 python3-click python3-typing-extensions python3-yaml python3-jsonpatch): %w\n%s", python, source, err, out)
	}
	return nil
}

// apply replaces p.old by p.new in p.file under source, unless the file
// already holds p.new.
func (p sourcePatch) apply(source string) error {
	path := filepath.Join(source, p.file)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("patching Kopf: %w", err)
	}
	text := string(data)
	if strings.Contains(text, p.new) {
		return nil
	}
	if strings.Count(text, p.old) != 1 {
		return fmt.Errorf("patching Kopf: %s does not hold %q once; is -kopf-source Kopf %s?", path, p.old, kopfVersion)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(text, p.old, p.new, 1)), 0o644); err != nil {
		return fmt.Errorf("patching Kopf: %w", err)
	}
	return nil
}

// kopfArgv runs Kopf on the Python kopfexample in one namespace. Kopf
// prints nothing when it is ready, so a shell says "ready" at once and
// execs it (through env, which sets its environment and execs too): the
// process the benchmark measures, its CPU time and its peak RSS, is
// python3 itself. The canary (workload.canary) then tells when Kopf
// handles objects.
func (d *driver) kopfArgv(namespace string) []string {
	argv := []string{"/bin/sh", "-c", `echo ready; exec "$@"`, "kopf",
		"env", "PYTHONPATH=" + d.o.KopfSource, "KUBECONFIG=" + d.kubeconfig, "PYTHONDONTWRITEBYTECODE=1",
		d.o.KopfPython, "-m", "kopf", "run", "--standalone", "--namespace", namespace}
	argv = append(argv, kopfLogFlags(d.o.LogLevel)...)
	return append(argv, d.o.kopfExample)
}

// kopfLogFlags are Kopf's flags closest to the other contenders' log
// level: Kopf logs at INFO by default, at DEBUG with --verbose, at
// WARNING with --quiet.
func kopfLogFlags(level string) []string {
	switch strings.ToLower(level) {
	case "debug":
		return []string{"--verbose"}
	case "warn", "warning", "error":
		return []string{"--quiet"}
	}
	return nil
}

// profiled reports whether the contender writes a CPU profile on SIGUSR1
// (Kopf does not: the signal would end it).
func profiled(contender string) bool { return contender != kopfContender }

// pythonRatios prints the Python module's figures against Kopf's and the
// Go module's, with issue 30's targets: CPU per change ≤ 0.4× Kopf's, peak
// RSS ≤ 0.5× Kopf's, writes per change equal to the Go module's.
func (r report) pythonRatios(w io.Writer) {
	py, ok := r.find(pythonContender)
	if !ok {
		return
	}
	if kopf, ok := r.find(kopfContender); ok && kopf.CPUPerChangeMs > 0 && kopf.PeakRSSMB > 0 {
		cpu, rss := py.CPUPerChangeMs/kopf.CPUPerChangeMs, py.PeakRSSMB/kopf.PeakRSSMB
		fmt.Fprintf(w, "%s/%s: CPU per change %.2f× (target ≤ 0.4×: %s), peak RSS %.2f× (target ≤ 0.5×: %s), writes per change %.2f×",
			pythonContender, kopfContender, cpu, yesNo(cpu <= 0.4), rss, yesNo(rss <= 0.5), py.WritesPerChange/kopf.WritesPerChange)
		fmt.Fprintf(w, ", phases %s\n", phaseRatios(py, kopf))
		r.pythonRounds(w)
	}
	if gomod, ok := r.find("kopf-wasm"); ok && gomod.CPUPerChangeMs > 0 {
		fmt.Fprintf(w, "%s/kopf-wasm (the Go module): writes per change %.3f vs %.3f (target equal: %s), CPU per change %.2f×, peak RSS %.2f×, phases %s\n",
			pythonContender, py.WritesPerChange, gomod.WritesPerChange, yesNo(py.Writes.Total == gomod.Writes.Total),
			py.CPUPerChangeMs/gomod.CPUPerChangeMs, py.PeakRSSMB/gomod.PeakRSSMB, phaseRatios(py, gomod))
	}
}

// pythonRounds prints the Python module's CPU per change and peak RSS
// over Kopf's in each round alone: Kopf's peak RSS moves a lot from pass
// to pass, and the summary compares the highest peaks.
func (r report) pythonRounds(w io.Writer) {
	byRound := map[int]map[string]result{}
	rounds := []int{}
	for _, res := range r.Results {
		if byRound[res.Round] == nil {
			byRound[res.Round] = map[string]result{}
			rounds = append(rounds, res.Round)
		}
		byRound[res.Round][res.Contender] = res
	}
	for _, round := range rounds {
		py, ok1 := byRound[round][pythonContender]
		kopf, ok2 := byRound[round][kopfContender]
		if !ok1 || !ok2 || kopf.CPUPerChangeMs <= 0 || kopf.PeakRSSMB <= 0 {
			continue
		}
		fmt.Fprintf(w, "round %d alone: %s/%s CPU per change %.2f×, peak RSS %.2f× (%.1f MB / %.1f MB)\n", round,
			pythonContender, kopfContender, py.CPUPerChangeMs/kopf.CPUPerChangeMs, py.PeakRSSMB/kopf.PeakRSSMB, py.PeakRSSMB, kopf.PeakRSSMB)
	}
}

// phaseRatios lists a's phase times over b's.
func phaseRatios(a, b result) string {
	parts := []string{}
	for i := range min(len(a.Phases), len(b.Phases)) {
		if b.Phases[i].Seconds > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f×", a.Phases[i].Name, a.Phases[i].Seconds/b.Phases[i].Seconds))
		}
	}
	return strings.Join(parts, ", ")
}

// needs reports whether any of the contenders is one of names.
func needs(contenders []string, names ...string) bool {
	return slices.ContainsFunc(contenders, func(c string) bool { return slices.Contains(names, c) })
}
