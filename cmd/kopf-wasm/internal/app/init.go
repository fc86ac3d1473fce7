package app

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/clierr"
	"github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/scaffold"
)

const initLong = `Create a new operator module in DIR (a new or empty folder), in Go (the
default), Rust, AssemblyScript or Python (--lang): create, update and
delete handlers for a custom resource, their tests on the language's guest
SDK test kit, the CRD, an example object, a Makefile and a README.

  go              main.go, main_test.go (kopftest), go.mod; make test = go test;
                  make build = go build for wasip1, or with --compiler tinygo,
                  kopf-wasm build --compiler tinygo (TinyGo: hack/tinygo.sh)
  rust            src/lib.rs with its tests (kopf::testing::Host),
                  Cargo.toml, .cargo/config.toml (offline, Debian's crates);
                  make test = cargo test
  assemblyscript  assembly/index.ts, test/run.mjs (the SDK's fake host, in
                  Node), asconfig.json, package.json; make test = node test/run.mjs
  python          handlers.py (Kopf's decorators), test_handlers.py
                  (kopf.testing's fake host); make test = python3 -m unittest

The guest SDKs are not published yet, so the module refers to a kopf-wasm
checkout's guest-sdk folder: the one --sdk names, or the one found above
DIR. For Go, go.mod gets replace directives and 'go mod tidy' runs (without
a checkout the README says how to add them); Rust, AssemblyScript and Python
modules need the checkout. Each module then builds (make build, i.e. kopf-wasm
build) and tests (make test) as generated.

Example - A module for kind Widget in group demo.example.com:
  kopf-wasm init widgets --kind Widget --group demo.example.com

Example - A Go module that builds with TinyGo:
  kopf-wasm init widgets --compiler tinygo

Example - A Rust module outside a checkout, with the SDK of one:
  kopf-wasm init ~/src/my-operator --lang rust --sdk ~/src/kopf-wasm/guest-sdk`

type initOptions struct {
	params scaffold.Params
	sdk    string
}

// sdkModule is the guest SDK's module path.
const sdkModule = "github.com/kopf-wasm/kopf-wasm/guest-sdk"

func initCmd(g *globals) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init [flags] DIR",
		Short: "Create a new operator module",
		Long:  initLong,
		Args:  args(1, 1, "DIR (the new module's folder)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return runInit(cmd, g, o, a[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.params.Lang, "lang", scaffold.Go, "the module's language: "+strings.Join(scaffold.Langs, ", "))
	fs.StringVar(&o.params.Compiler, "compiler", "", "the compiler of a Go module's make build: go (the default) or tinygo")
	fs.StringVar(&o.params.Name, "name", "", "the module's name (default: DIR's name)")
	fs.StringVar(&o.params.Module, "module", "", "the Go module path (default example.com/<name>)")
	fs.StringVar(&o.params.Group, "group", "", "the custom resource's API group (default example.com)")
	fs.StringVar(&o.params.Version, "api-version", "", "the custom resource's version (default v1)")
	fs.StringVar(&o.params.Kind, "kind", "", "the custom resource's kind (default Greeting)")
	fs.StringVar(&o.sdk, "sdk", "", "a kopf-wasm checkout's guest-sdk folder, for go.mod's replace directives (default: found above DIR)")
	return cmd
}

func runInit(cmd *cobra.Command, g *globals, o initOptions, dir string) error {
	p, err := o.params.Defaults(dir)
	if err != nil {
		return clierr.Usagef(fmt.Errorf("init: %w", err), "")
	}
	sdk := o.sdk
	if sdk == "" {
		sdk = findSDK(dir)
	} else if !isSDK(sdk) {
		return clierr.Usagef(fmt.Errorf("init: %s is not the kopf-wasm guest SDK (no go.mod of %s)", sdk, sdkModule),
			"pass the guest-sdk folder of a kopf-wasm checkout")
	}
	switch {
	case sdk == "" && p.Lang != scaffold.Go:
		return clierr.Usagef(fmt.Errorf("init: a %s module needs a kopf-wasm checkout's guest SDK, and none is above %s", p.Lang, dir),
			"pass --sdk with the guest-sdk folder of a kopf-wasm checkout")
	case p.Lang == scaffold.Go && sdk != "":
		if p.SDKDir, p.ABIDir, err = replacePaths(dir, sdk); err != nil {
			return err
		}
	case p.Lang != scaffold.Go:
		langSDK := filepath.Join(sdk, p.Lang) // guest-sdk/rust, guest-sdk/assemblyscript
		if _, err := os.Stat(langSDK); err != nil {
			return clierr.Usagef(fmt.Errorf("init: the checkout has no %s SDK (%w)", p.Lang, err), "use a kopf-wasm checkout with guest-sdk/"+p.Lang)
		}
		if p.SDKDir, _, err = replacePaths(dir, langSDK); err != nil {
			return err
		}
	}
	if exe, err := os.Executable(); err == nil {
		p.KopfWasm = filepath.ToSlash(exe) // the Makefile's fallback when kopf-wasm is not on PATH
	}
	written, err := scaffold.Write(dir, p)
	if err != nil {
		return clierr.New(fmt.Errorf("init: %w", err), "")
	}
	out := g.streams.Out
	fmt.Fprintf(out, "created %s: %s\n", dir, strings.Join(written, ", "))
	if p.Lang != scaffold.Go {
		fmt.Fprintf(out, "next: cd %s && make test && make build\n", dir)
		return nil
	}
	if sdk == "" {
		fmt.Fprintf(out, "next: point go.mod at a kopf-wasm checkout (see %s), then make test and make build\n", filepath.Join(dir, "README.md"))
		return nil
	}
	if err := goModTidy(cmd, g, dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "next: cd %s && make test && make build\n", dir)
	return nil
}

// findSDK looks for a kopf-wasm checkout's guest-sdk in the folders above
// dir; "" when there is none.
func findSDK(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if sdk := filepath.Join(d, "guest-sdk"); isSDK(sdk) {
			return sdk
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// isSDK reports whether dir holds the guest SDK's go.mod.
func isSDK(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == sdkModule
		}
	}
	return false
}

// replacePaths returns the guest SDK's and the abi's folders relative to
// dir (the abi module sits beside the SDK in a checkout).
func replacePaths(dir, sdk string) (sdkRel, abiRel string, err error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	absSDK, err := filepath.Abs(sdk)
	if err != nil {
		return "", "", err
	}
	rel := func(target string) string {
		r, err := filepath.Rel(absDir, target)
		if err != nil {
			return target
		}
		if !strings.HasPrefix(r, ".") {
			r = "./" + r
		}
		return filepath.ToSlash(r)
	}
	return rel(absSDK), rel(filepath.Join(filepath.Dir(absSDK), "abi")), nil
}

// goModTidy completes go.mod and writes go.sum, outside any go.work.
func goModTidy(cmd *cobra.Command, g *globals, dir string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(g.streams.Out, "go is not on PATH: run 'go mod tidy' in %s once Go is installed\n", dir)
		return nil
	}
	c := exec.CommandContext(cmd.Context(), gobin, "mod", "tidy")
	c.Dir = dir
	c.Env = append(os.Environ(), "GOWORK=off")
	c.Stdout, c.Stderr = g.streams.Err, g.streams.Err
	if err := c.Run(); err != nil {
		return clierr.New(errors.Join(fmt.Errorf("init: go mod tidy in %s failed", dir), err),
			"check the replace directives in go.mod and the network to the Go module proxy")
	}
	return nil
}
