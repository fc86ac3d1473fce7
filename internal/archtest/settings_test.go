package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

const settingsPath = Module + "/host/settings"

// TestEverySettingIsRead fails when a field of settings.Settings is never
// read by the host's code (outside host/settings and tests): a setting
// nobody reads is a knob that does nothing. It type-checks every package
// of the root module against the compiler's export data and collects the
// settings fields that are read through a selector (s.Kube.QPS, k.QPS,
// ...); assignments to a field do not count.
func TestEverySettingIsRead(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := listExport(root)
	if err != nil {
		t.Fatal(err)
	}
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	read := map[string][]string{} // "Group.Field" -> packages that read it
	checked := 0
	for _, p := range pkgs {
		if !strings.HasPrefix(p.ImportPath, Module+"/") || p.ImportPath == settingsPath || len(p.GoFiles) == 0 {
			continue
		}
		fields, err := settingsReads(fset, imp, p)
		if err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
		for _, f := range fields {
			read[f] = append(read[f], p.ImportPath)
		}
		checked++
	}
	fields := settingsFields()
	var unread []string
	for _, f := range fields {
		if len(read[f.goName]) == 0 {
			unread = append(unread, fmt.Sprintf("%s (%s)", f.key, f.goName))
		}
	}
	if len(unread) > 0 {
		t.Errorf("settings never read outside host/settings (wire them where they belong, or remove them): %s",
			strings.Join(unread, ", "))
	}
	t.Logf("checked %d packages for reads of %d settings", checked, len(fields))
}

type settingsField struct {
	goName string // "Group.Field", with the group's type name
	key    string // its key in a config file
}

// settingsFields lists the leaf fields of settings.Settings; the fields
// of a type a group embeds (settings.Lease) are the group's, read through
// it (s.Sharding.LeaseDuration).
func settingsFields() []settingsField {
	var out []settingsField
	top := reflect.TypeFor[settings.Settings]()
	for i := range top.NumField() {
		g := top.Field(i)
		for _, f := range reflect.VisibleFields(g.Type) {
			if f.Anonymous {
				continue
			}
			out = append(out, settingsField{
				goName: g.Type.Name() + "." + f.Name,
				key:    settings.JSONName(g) + "." + settings.JSONName(f),
			})
		}
	}
	return out
}

type exportedPackage struct {
	ImportPath, Dir, Export string
	GoFiles, CgoFiles       []string
	Error                   *struct{ Err string }
}

// listExport runs `go list -export -deps` on the root module: every
// package with the file of its export data.
func listExport(root string) ([]exportedPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,CgoFiles,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []exportedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p exportedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Error != nil && strings.HasPrefix(p.ImportPath, Module) {
			return nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// settingsReads type-checks the non-test files of p and returns the
// settings fields they read, as "Group.Field".
func settingsReads(fset *token.FileSet, imp types.Importer, p exportedPackage) ([]string, error) {
	var files []*ast.File
	for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp, FakeImportC: true, Error: func(error) {}}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil && len(p.CgoFiles) == 0 {
		return nil, err
	}
	written := map[*ast.SelectorExpr]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && (as.Tok == token.ASSIGN || as.Tok == token.DEFINE) {
				for _, lhs := range as.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok {
						written[sel] = true
					}
				}
			}
			return true
		})
	}
	var out []string
	for sel, s := range info.Selections {
		if s.Kind() != types.FieldVal || written[sel] || s.Obj().Pkg() == nil || s.Obj().Pkg().Path() != settingsPath {
			continue
		}
		recv := s.Recv()
		if ptr, ok := recv.(*types.Pointer); ok {
			recv = ptr.Elem()
		}
		if named, ok := recv.(*types.Named); ok {
			out = append(out, named.Obj().Name()+"."+s.Obj().Name())
		}
	}
	return out, nil
}
