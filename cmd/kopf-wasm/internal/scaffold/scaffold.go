// Package scaffold writes a new operator module for `kopf-wasm init`: a Go
// main package with create, update and delete handlers for a custom
// resource, their tests on the guest SDK's test kit (kopftest), the CRD, an
// example object, a Makefile and a README. The templates are in
// template/; Write renders them with Params.
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

//go:embed template/*.tmpl
var templates embed.FS

// files maps each template to the file it writes.
var files = map[string]string{
	"go.mod.tmpl":       "go.mod",
	"main.go.tmpl":      "main.go",
	"main_test.go.tmpl": "main_test.go",
	"crd.yaml.tmpl":     "crd.yaml",
	"object.yaml.tmpl":  "object.yaml",
	"Makefile.tmpl":     "Makefile",
	"README.md.tmpl":    "README.md",
	"gitignore.tmpl":    ".gitignore",
}

// Params say what to generate. Defaults fills the empty ones.
type Params struct {
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
	// folder, or absolute) of local guest-sdk and abi modules, written as
	// replace directives.
	SDKDir, ABIDir string
}

var (
	kindRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
)

// Defaults fills the empty fields for a module in dir and checks them.
func (p Params) Defaults(dir string) (Params, error) {
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
	tmpl, err := template.ParseFS(templates, "template/*.tmpl")
	if err != nil {
		return nil, err
	}
	var written []string
	for name, out := range files {
		var buf bytes.Buffer
		if err := tmpl.ExecuteTemplate(&buf, name, p); err != nil {
			return written, fmt.Errorf("render %s: %w", out, err)
		}
		if err := os.WriteFile(filepath.Join(dir, out), buf.Bytes(), 0o644); err != nil {
			return written, err
		}
		written = append(written, out)
	}
	sort.Strings(written)
	return written, nil
}
