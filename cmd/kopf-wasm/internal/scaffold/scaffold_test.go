package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaults(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		in   Params
		want Params
		err  string
	}{
		{name: "from the folder", dir: "/x/My-Op", want: Params{Lang: "go", Name: "my-op", Module: "example.com/my-op",
			Group: "example.com", Version: "v1", Kind: "Greeting", Plural: "greetings", Singular: "greeting"}},
		{name: "given", dir: "/x/y", in: Params{Name: "w", Module: "m/w", Group: "g.io", Version: "v2", Kind: "Widget"},
			want: Params{Lang: "go", Name: "w", Module: "m/w", Group: "g.io", Version: "v2", Kind: "Widget", Plural: "widgets", Singular: "widget"}},
		{name: "bad kind and name", dir: "/x/y", in: Params{Name: "a_b", Kind: "widget"}, err: `module name "a_b"`},
		{name: "bad group", dir: "/x/y", in: Params{Group: "a/b"}, err: `group "a/b"`},
		{name: "tinygo", dir: "/x/y", in: Params{Compiler: "tinygo"}, want: Params{Lang: "go", Compiler: "tinygo", Name: "y",
			Module: "example.com/y", Group: "example.com", Version: "v1", Kind: "Greeting", Plural: "greetings", Singular: "greeting"}},
		{name: "bad compiler", dir: "/x/y", in: Params{Compiler: "gcc"}, err: `compiler "gcc": use go or tinygo`},
		{name: "compiler of rust", dir: "/x/y", in: Params{Lang: "rust", Compiler: "tinygo"}, err: `compiler "tinygo": only a Go module takes one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Defaults(tt.dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Defaults = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	p, err := Params{Kind: "Widget"}.Defaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	p.SDKDir, p.ABIDir = "../sdk", "../abi"
	files, err := Write(dir, p)
	if err != nil || len(files) != len(templatesOut()) {
		t.Fatalf("Write = %v, %v", files, err)
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !strings.Contains(string(gomod), "github.com/kopf-wasm/kopf-wasm/guest-sdk => ../sdk") {
		t.Errorf("go.mod lacks the replace:\n%s", gomod)
	}
	if _, err := Write(dir, p); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("second Write: error = %v, want not empty", err)
	}
	// Without an SDK, no replace and a README that says how to add it.
	dir2 := filepath.Join(t.TempDir(), "w")
	p.SDKDir, p.ABIDir = "", ""
	if _, err := Write(dir2, p); err != nil {
		t.Fatal(err)
	}
	gomod, _ = os.ReadFile(filepath.Join(dir2, "go.mod"))
	readme, _ := os.ReadFile(filepath.Join(dir2, "README.md"))
	if strings.Contains(string(gomod), "replace") || !strings.Contains(string(readme), "go mod edit -replace") {
		t.Errorf("go.mod:\n%s\nREADME:\n%s", gomod, readme)
	}
}

// TestWriteTinyGo: a Go module for TinyGo builds with kopf-wasm build
// --compiler tinygo, and its README says where TinyGo comes from.
func TestWriteTinyGo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	p, err := Params{Kind: "Widget", Compiler: CompilerTinyGo}.Defaults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"Makefile":  "build: kopf-wasm-found\n\t$(KOPF_WASM) build --compiler tinygo -o w.wasm .\n\ninvoke:",
		"README.md": "CI=true hack/tinygo.sh",
	} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !strings.Contains(string(b), text) {
			t.Errorf("%s lacks %q:\n%s", name, text, b)
		}
	}
}

func templatesOut() []string {
	var out []string
	for _, f := range files[Go] {
		out = append(out, f)
	}
	return out
}

// TestWriteLangs: the Rust and AssemblyScript sets refer to the SDK by the
// path given, seen from where each file is used (the build runs in the
// module's folder; imports are relative to assembly/ and test/).
func TestWriteLangs(t *testing.T) {
	for _, tt := range []struct {
		lang  string
		files int
		want  map[string]string // file: text it must hold
	}{
		{Rust, len(files[Rust]), map[string]string{
			"Cargo.toml":         `kopf = { path = "../sdk/rust" }`,
			".cargo/config.toml": `directory = "/usr/share/cargo/registry"`,
			"src/lib.rs":         `m.on_create(GROUP, VERSION, PLURAL, "create", create);`,
		}},
		{AssemblyScript, len(files[AssemblyScript]), map[string]string{
			"asconfig.json":     `"use": ["abort=../sdk/assemblyscript/assembly/host/kopfAbort"]`,
			"assembly/index.ts": `from "../../sdk/assemblyscript/assembly/index";`,
			"test/run.mjs":      `from "../../sdk/assemblyscript/test/fakehost.mjs";`,
			"package.json":      `"@kopf-wasm/guest-sdk-assemblyscript": "file:../sdk/assemblyscript"`,
		}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			p, err := Params{Lang: tt.lang, Kind: "Widget"}.Defaults(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Write(dir, p); err == nil || !strings.Contains(err.Error(), "needs the path of the SDK") {
				t.Errorf("Write without SDKDir: error = %v", err)
			}
			p.SDKDir = "../sdk/" + tt.lang
			written, err := Write(dir, p)
			if err != nil || len(written) != tt.files {
				t.Fatalf("Write = %v, %v", written, err)
			}
			for name, text := range tt.want {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !strings.Contains(string(b), text) {
					t.Errorf("%s lacks %q:\n%s", name, text, b)
				}
			}
		})
	}
}
