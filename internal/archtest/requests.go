package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// RequestBuilder is the one package of the host that may fill an
// abi.Request: the execution layer (DESIGN.md, "Layering"). Requests built
// elsewhere drift from what handlers really get.
const RequestBuilder = "host/internal/execution"

// RequestLiterals lists the places under root (a checkout of the root
// module) outside RequestBuilder where non-test code writes an abi.Request
// composite literal, as "file:line". The guest modules (abi, guest-sdk,
// examples) build requests on the other side of the ABI and are skipped.
func RequestLiterals(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == "abi" || rel == "guest-sdk" || rel == "examples" || rel == RequestBuilder:
				return filepath.SkipDir
			case d.Name() == "testdata" || d.Name() == "bin" || (strings.HasPrefix(d.Name(), ".") && rel != "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Request" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "abi" {
					out = append(out, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line))
				}
			}
			return true
		})
		return nil
	})
	return out, err
}
