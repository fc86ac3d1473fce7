package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/option"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/scaffold"
	"github.com/kopf-wasm/kopf-wasm/host"
)

const buildLong = `Build a handler module into a .wasm file, in the language DIR is written
in, then load the result once to check that it is a module the host accepts
and print its name and handlers. The file is written only then (built to a
temporary folder beside OUT and renamed): a build the host refuses leaves the
previous OUT as it was. DIR defaults to the current folder, OUT to
DIR/<folder name>.wasm.

The language is detected from DIR's files:

  go.mod (or .go files)  Go: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
                         (Go 1.24 or newer on PATH); with --compiler tinygo,
                         tinygo build -target=wasip1 -buildmode=c-shared
                         -no-debug -scheduler=none (a module a tenth the size;
                         no goroutines; TinyGo from $KOPF_WASM_TINYGO, the one
                         hack/tinygo.sh built, or PATH)
  Cargo.toml             Rust: cargo build --release --target wasm32-wasi, the
                         crate's cdylib (Debian's /usr/bin/cargo and rustc when
                         present: they have the wasm32-wasi target)
  asconfig.json, or a    AssemblyScript: asc ENTRY --config asconfig.json
  package.json naming    --target release, run in DIR (ENTRY: asconfig's first
  assemblyscript         entry, else assembly/index.ts; asc from DIR's
                         node_modules, the SDK's that package.json names by
                         path, or PATH)
  *.py                   Python (Kopf's API): the Python runtime that
                         hack/python-runtime.sh builds (or the folder
                         $KOPF_WASM_PYTHON_RUNTIME names) with DIR's files
                         and the SDK's kopf package, started once and
                         snapshotted: every top-level .py file is imported,
                         as 'kopf run a.py b.py' does; tests, hidden files
                         and __pycache__ stay out, a native extension is
                         refused

Example - Build the module in the current folder:
  kopf-wasm build

Example - Build the example module into bin/:
  kopf-wasm build examples/kopfexample -o bin/kopfexample.wasm

Example - Build it with TinyGo:
  kopf-wasm build examples/kopfexample --compiler tinygo -o bin/kopfexample-tinygo.wasm`

func buildCmd(g *globals) *cobra.Command {
	var out, compiler string
	cmd := &cobra.Command{
		Use:   "build [flags] [DIR]",
		Short: "Build a Go, Rust, AssemblyScript or Python handler module to .wasm",
		Long:  buildLong,
		Args:  args(0, 1, "DIR"),
		RunE: func(cmd *cobra.Command, a []string) error {
			dir := "."
			if len(a) == 1 {
				dir = a[0]
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return clierr.Usagef(fmt.Errorf("build: %s is not a folder", dir), "name the folder of the module's sources")
			}
			lang := detectLang(abs)
			if lang == "" {
				return clierr.Usagef(fmt.Errorf("build: %s holds no go.mod or .go files, Cargo.toml, asconfig.json, or .py files", dir),
					"name the folder of a Go, Rust, AssemblyScript or Python module (kopf-wasm init --lang creates one)")
			}
			if err := checkCompiler(compiler, lang, dir); err != nil {
				return err
			}
			if lang == scaffold.Go && compiler == compilerTinyGo {
				lang = compilerTinyGo
			}
			if out == "" {
				out = filepath.Join(abs, filepath.Base(abs)+".wasm")
			} else if out, err = filepath.Abs(out); err != nil {
				return err
			}
			return buildModule(cmd, g, lang, abs, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the .wasm file to write (default DIR/<folder name>.wasm)")
	option.SkipEnv(cmd.Flags(), "output") // KOPF_WASM_OUTPUT is inspect's and invoke's format
	cmd.Flags().StringVar(&compiler, "compiler", compilerGo, "the compiler of a Go module: go or tinygo")

	return cmd
}

// checkCompiler refuses a --compiler that is not go or tinygo, and tinygo
// for a module that is not Go.
func checkCompiler(compiler, lang, dir string) error {
	switch {
	case compiler != compilerGo && compiler != compilerTinyGo:
		return clierr.Usagef(fmt.Errorf("build: unknown compiler %q", compiler), "use --compiler go or --compiler tinygo")
	case compiler == compilerTinyGo && lang != scaffold.Go:
		return clierr.Usagef(fmt.Errorf("build: --compiler tinygo builds Go modules, and %s is a %s module", dir, lang), "leave --compiler out")
	}
	return nil
}

// detectLang names the language of the module in dir; "" when it is none
// that build knows.
func detectLang(dir string) string {
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	switch {
	case has("go.mod"):
		return scaffold.Go
	case has("Cargo.toml"):
		return scaffold.Rust
	case has("asconfig.json"):
		return scaffold.AssemblyScript
	}
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil && strings.Contains(string(b), "assemblyscript") {
		return scaffold.AssemblyScript
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(m) > 0 {
		return scaffold.Go
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.py")); len(m) > 0 {
		return scaffold.Python
	}
	return ""
}

// buildModule builds to a temporary file beside out, checks that the host
// accepts it and only then renames it to out.
func buildModule(cmd *cobra.Command, g *globals, lang, dir, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, filepath.Base(out))
	switch lang {
	case scaffold.Go:
		err = goBuild(cmd, g, dir, tmp)
	case compilerTinyGo:
		err = tinygoBuild(cmd, g, dir, tmp)
	case scaffold.Rust:
		err = rustBuild(cmd, g, dir, tmp)
	case scaffold.AssemblyScript:
		err = asBuild(cmd, g, dir, tmp)
	case scaffold.Python:
		err = pythonBuild(cmd, g, dir, tmp)
	}
	if err != nil {
		return err
	}
	m, _, err := host.Inspect(cmd.Context(), tmp, offlineSettings())
	if err != nil {
		return clierr.New(fmt.Errorf("build: the %s build of %s is not a module the host accepts, so %s is left as it was: %w", lang, dir, out, err),
			"see the host's reason: the module must use the kopf-wasm guest SDK and register its handlers")
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(g.streams.Out, "built %s: module %s, %s\n", out, strings.TrimSpace(m.Module.Name+" "+m.Module.Version), count(len(m.Handlers), "handler"))
	return nil
}

// tool runs a build tool in dir with its output on the error stream.
func tool(cmd *cobra.Command, g *globals, dir string, env []string, name string, arg ...string) error {
	c := exec.CommandContext(cmd.Context(), name, arg...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	c.Stdout, c.Stderr = g.streams.Err, g.streams.Err
	return c.Run()
}

// goBuild runs the Go toolchain for wasip1 in dir; its output goes to the
// error stream.
func goBuild(cmd *cobra.Command, g *globals, dir, out string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return clierr.New(errors.New("build: the go command is not on PATH"),
			"install Go 1.24 or newer (https://go.dev/doc/install) and run the command again")
	}
	if err := tool(cmd, g, dir, []string{"GOOS=wasip1", "GOARCH=wasm"}, gobin, "build", "-buildmode=c-shared", "-o", out, "."); err != nil {
		return clierr.New(fmt.Errorf("build: go build in %s failed (%w)", dir, err), "see the compiler's output above")
	}
	return nil
}

// rustToolHint says how to get a Rust toolchain with the wasm32-wasi target.
const rustToolHint = "install Rust with the wasm32-wasi target (Debian: apt-get install rustc cargo libstd-rust-dev-wasm32 lld-14; in a kopf-wasm checkout: hack/guest-toolchains.sh install rust)"

// rustBuild builds the crate in dir for wasm32-wasi and copies its cdylib
// to out. Debian's cargo and rustc are preferred: a rustup toolchain first
// on PATH usually lacks the wasm targets.
func rustBuild(cmd *cobra.Command, g *globals, dir, out string) error {
	cargo, env := "/usr/bin/cargo", []string{}
	if _, err := os.Stat(cargo); err == nil {
		env = append(env, "PATH=/usr/bin:"+os.Getenv("PATH"))
		if _, err := os.Stat("/usr/bin/rustc"); err == nil && os.Getenv("RUSTC") == "" {
			env = append(env, "RUSTC=/usr/bin/rustc")
		}
	} else if cargo, err = exec.LookPath("cargo"); err != nil {
		return clierr.New(errors.New("build: cargo is not installed"), rustToolHint)
	}
	manifest := filepath.Join(dir, "Cargo.toml")
	c := exec.CommandContext(cmd.Context(), cargo, "metadata", "--format-version", "1", "--no-deps", "--manifest-path", manifest)
	c.Env = append(os.Environ(), env...)
	c.Stderr = g.streams.Err
	meta, err := c.Output()
	if err != nil {
		return clierr.New(fmt.Errorf("build: cargo metadata in %s failed (%w)", dir, err), "see cargo's output above")
	}
	lib, targetDir, err := cdylib(meta, manifest)
	if err != nil {
		return clierr.New(fmt.Errorf("build: %s: %w", manifest, err), `add [lib] crate-type = ["cdylib", "rlib"] to Cargo.toml`)
	}
	if err := tool(cmd, g, dir, env, cargo, "build", "--release", "--target", "wasm32-wasi", "--manifest-path", manifest); err != nil {
		return clierr.New(fmt.Errorf("build: cargo build in %s failed (%w)", dir, err), "see cargo's output above; if the wasm32-wasi target is missing, "+rustToolHint)
	}
	b, err := os.ReadFile(filepath.Join(targetDir, "wasm32-wasi", "release", lib+".wasm"))
	if err != nil {
		return fmt.Errorf("build: cargo built no module: %w", err)
	}
	return os.WriteFile(out, b, 0o644)
}

// cdylib reads cargo metadata's output: the file name of the package's
// cdylib and the target folder.
func cdylib(meta []byte, manifest string) (name, targetDir string, err error) {
	var m struct {
		TargetDirectory string `json:"target_directory"`
		Packages        []struct {
			ManifestPath string `json:"manifest_path"`
			Targets      []struct {
				Name       string   `json:"name"`
				CrateTypes []string `json:"crate_types"`
			} `json:"targets"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		return "", "", fmt.Errorf("reading cargo metadata: %w", err)
	}
	for _, p := range m.Packages {
		if filepath.Clean(p.ManifestPath) != filepath.Clean(manifest) && len(m.Packages) > 1 {
			continue
		}
		for _, t := range p.Targets {
			for _, ct := range t.CrateTypes {
				if ct == "cdylib" {
					return strings.ReplaceAll(t.Name, "-", "_"), m.TargetDirectory, nil
				}
			}
		}
	}
	return "", "", errors.New("the package has no cdylib library, so cargo builds no .wasm module")
}

// asBuild compiles the AssemblyScript module in dir with asc, in dir (the
// paths in asconfig.json, such as the SDK's abort function, are relative
// to it).
func asBuild(cmd *cobra.Command, g *globals, dir, out string) error {
	asc := findAsc(dir)
	if asc == "" {
		return clierr.New(errors.New("build: the AssemblyScript compiler (asc) is not installed"),
			"run npm install in the module's folder, or hack/guest-toolchains.sh install assemblyscript in the kopf-wasm checkout whose SDK the module uses")
	}
	entry, args := filepath.Join("assembly", "index.ts"), []string{}
	if b, err := os.ReadFile(filepath.Join(dir, "asconfig.json")); err == nil {
		var c struct {
			Entries []string `json:"entries"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return clierr.New(fmt.Errorf("build: %s: %w", filepath.Join(dir, "asconfig.json"), err), "fix the JSON")
		}
		if len(c.Entries) > 0 {
			entry = c.Entries[0]
		}
		args = append(args, "--config", "asconfig.json")
	} else {
		// No asconfig.json: the options the host needs.
		args = append(args, "--runtime", "incremental", "--exportStart", "_initialize", "-O3", "--shrinkLevel", "1")
	}
	args = append([]string{entry}, append(args, "--target", "release", "--outFile", out)...)
	if err := tool(cmd, g, dir, nil, asc, args...); err != nil {
		return clierr.New(fmt.Errorf("build: asc in %s failed (%w)", dir, err), "see the compiler's output above")
	}
	return nil
}

// findAsc returns the asc to use for the module in dir: its own
// node_modules' one, the one of the SDK its package.json names by path
// (file:...), or asc on PATH; "" when there is none.
func findAsc(dir string) string {
	bin := func(d string) string {
		p := filepath.Join(d, "node_modules", ".bin", "asc")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	if p := bin(dir); p != "" {
		return p
	}
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		var pkg struct {
			Dependencies    map[string]string `json:"dependencies"`
			DevDependencies map[string]string `json:"devDependencies"`
		}
		if json.Unmarshal(b, &pkg) == nil {
			for _, deps := range []map[string]string{pkg.DevDependencies, pkg.Dependencies} {
				if v, ok := strings.CutPrefix(deps["@kopf-wasm/guest-sdk-assemblyscript"], "file:"); ok {
					if !filepath.IsAbs(v) {
						v = filepath.Join(dir, v)
					}
					if p := bin(v); p != "" {
						return p
					}
				}
			}
		}
	}
	if p, err := exec.LookPath("asc"); err == nil {
		return p
	}
	return ""
}
