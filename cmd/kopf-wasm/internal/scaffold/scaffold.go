// Package scaffold writes a new operator module for `kopf-wasm init`, in Go,
// Rust, AssemblyScript or Python: create, update and delete handlers for a
// custom resource, their tests on the language's guest SDK test kit (Go's
// kopftest, Rust's kopf::testing::Host, the AssemblyScript SDK's fake
// host, Python's kopf.testing), the CRD, an example object, a Makefile and
// a README. The templates are in template/ (Go), template/rust/,
// template/assemblyscript/ and template/python/; Write renders the
// language's set with Params.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

//go:embed template/*.tmpl template/rust/*.tmpl template/assemblyscript/*.tmpl template/python/*.tmpl
var templates embed.FS

// Languages a module can be written in.
const (
	Go             = "go"
	Rust           = "rust"
	AssemblyScript = "assemblyscript"
	Python         = "python"
)

// Langs lists the languages, in the order usage messages name them.
var Langs = []string{Go, Rust, AssemblyScript, Python}

// Compilers of a Go module: the Go toolchain (the default) or TinyGo.
const (
	CompilerGo     = "go"
	CompilerTinyGo = "tinygo"
)

// files maps, for each language, each template (a path under template/) to
// the file it writes.
var files = map[string]map[string]string{
	Go: {
		"template/go.mod.tmpl":       "go.mod",
		"template/main.go.tmpl":      "main.go",
		"template/main_test.go.tmpl": "main_test.go",
		"template/crd.yaml.tmpl":     "crd.yaml",
		"template/object.yaml.tmpl":  "object.yaml",
		"template/Makefile.tmpl":     "Makefile",
		"template/README.md.tmpl":    "README.md",
		"template/gitignore.tmpl":    ".gitignore",
	},
	Rust: {
		"template/rust/Cargo.toml.tmpl":   "Cargo.toml",
		"template/rust/cargo-config.tmpl": ".cargo/config.toml",
		"template/rust/lib.rs.tmpl":       "src/lib.rs",
		"template/crd.yaml.tmpl":          "crd.yaml",
		"template/object.yaml.tmpl":       "object.yaml",
		"template/rust/Makefile.tmpl":     "Makefile",
		"template/rust/README.md.tmpl":    "README.md",
		"template/rust/gitignore.tmpl":    ".gitignore",
	},
	AssemblyScript: {
		"template/assemblyscript/package.json.tmpl":  "package.json",
		"template/assemblyscript/asconfig.json.tmpl": "asconfig.json",
		"template/assemblyscript/index.ts.tmpl":      "assembly/index.ts",
		"template/assemblyscript/run.mjs.tmpl":       "test/run.mjs",
		"template/crd.yaml.tmpl":                     "crd.yaml",
		"template/object.yaml.tmpl":                  "object.yaml",
		"template/assemblyscript/Makefile.tmpl":      "Makefile",
		"template/assemblyscript/README.md.tmpl":     "README.md",
		"template/gitignore.tmpl":                    ".gitignore",
	},
	Python: {
		"template/python/handlers.py.tmpl":      "handlers.py",
		"template/python/test_handlers.py.tmpl": "test_handlers.py",
		"template/crd.yaml.tmpl":                "crd.yaml",
		"template/object.yaml.tmpl":             "object.yaml",
		"template/python/Makefile.tmpl":         "Makefile",
		"template/python/README.md.tmpl":        "README.md",
		"template/python/gitignore.tmpl":        ".gitignore",
	},
}

// Params say what to generate. Defaults fills the empty ones.
type Params struct {
	// Lang is the module's language: Go (the default), Rust or
	// AssemblyScript.
	Lang string
	// Compiler builds a Go module: CompilerGo (or empty, the default) or
	// CompilerTinyGo, whose Makefile builds with kopf-wasm build
	// --compiler tinygo. Other languages have their own and leave it empty.
	Compiler string
	// Name is the module's name (its manifest and .wasm file). Default: the
	// folder's name.
	Name string
	// Module is the Go module path. Default "example.com/<Name>".
	Module string
	// Group, Version and Kind name the custom resource. Defaults
	// "example.com", "v1" and "Greeting".
	Group, Version, Kind string
	// Plural and Singular are derived from Kind.
	Plural, Singular string
	// SDKDir and ABIDir, when set, are the paths (relative to the new
	// folder, or absolute, with forward slashes) of local guest-sdk and abi
	// modules, written as replace directives. For Rust, SDKDir is the
	// path of the kopf crate (a checkout's guest-sdk/rust); for
	// AssemblyScript, the SDK's folder (guest-sdk/assemblyscript), and both
	// require it: their SDKs are not published either.
	SDKDir, ABIDir string
	// KopfWasm is the kopf-wasm binary that wrote the module (an absolute
	// path), which its Makefile uses when kopf-wasm is not on PATH; "" to
	// rely on PATH alone.
	KopfWasm string
}

// Crate is the Rust library's name: Name with underscores.
func (p Params) Crate() string { return strings.ReplaceAll(p.Name, "-", "_") }

// FromSub is SDKDir seen from a folder one level below the module's
// (AssemblyScript's assembly/ and test/).
func (p Params) FromSub() string {
	if p.SDKDir == "" || strings.HasPrefix(p.SDKDir, "/") {
		return p.SDKDir
	}
	return "../" + strings.TrimPrefix(p.SDKDir, "./")
}

// AbortPath is the AssemblyScript SDK's abort function as asc's --use
// names it: a source path relative to the folder asc runs in (the
// module's), without ".ts".
func (p Params) AbortPath() string {
	return strings.TrimPrefix(p.SDKDir, "./") + "/assembly/host/kopfAbort"
}

var (
	kindRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
)

// Defaults fills the empty fields for a module in dir and checks them.
func (p Params) Defaults(dir string) (Params, error) {
	if p.Lang == "" {
		p.Lang = Go
	}
	if p.Name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return p, err
		}
		p.Name = strings.ToLower(filepath.Base(abs))
	}
	if p.Module == "" {
		p.Module = "example.com/" + p.Name
	}
	if p.Group == "" {
		p.Group = "example.com"
	}
	if p.Version == "" {
		p.Version = "v1"
	}
	if p.Kind == "" {
		p.Kind = "Greeting"
	}
	p.Singular = strings.ToLower(p.Kind)
	p.Plural = p.Singular + "s"
	var problems []string
	if files[p.Lang] == nil {
		problems = append(problems, fmt.Sprintf("language %q: use %s", p.Lang, strings.Join(Langs, ", ")))
	}
	switch {
	case p.Lang == Go && p.Compiler != "" && p.Compiler != CompilerGo && p.Compiler != CompilerTinyGo:
		problems = append(problems, fmt.Sprintf("compiler %q: use %s or %s", p.Compiler, CompilerGo, CompilerTinyGo))
	case p.Lang != Go && p.Compiler != "":
		problems = append(problems, fmt.Sprintf("compiler %q: only a Go module takes one (%s's is its own)", p.Compiler, p.Lang))
	}
	if !nameRE.MatchString(p.Name) {
		problems = append(problems, fmt.Sprintf("module name %q: use lower-case letters, digits and dashes", p.Name))
	}
	if !kindRE.MatchString(p.Kind) {
		problems = append(problems, fmt.Sprintf("kind %q: use a capitalised word such as Greeting", p.Kind))
	}
	if strings.ContainsAny(p.Group+p.Version, " /") {
		problems = append(problems, fmt.Sprintf("group %q or version %q: no spaces or slashes", p.Group, p.Version))
	}
	if len(problems) > 0 {
		return p, errors.New(strings.Join(problems, "; "))
	}
	return p, nil
}

// Write renders the templates into dir, which must not exist or be empty,
// and returns the files it wrote, relative to dir.
func Write(dir string, p Params) ([]string, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty: give a new or empty folder", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	set := files[p.Lang]
	if set == nil {
		return nil, fmt.Errorf("no templates for language %q", p.Lang)
	}
	if p.Lang != Go && p.SDKDir == "" {
		return nil, fmt.Errorf("a %s module needs the path of the SDK (SDKDir)", p.Lang)
	}
	var written []string
	for name, out := range set {
		tmpl, err := template.ParseFS(templates, name)
		if err != nil {
			return written, err
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, p); err != nil {
			return written, fmt.Errorf("render %s: %w", out, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(out))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return written, err
		}
		written = append(written, out)
	}
	sort.Strings(written)
	return written, nil
}
