package settings

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite docs/settings.md from the settings' fields and doc comments")

// TestSettingsDocs keeps docs/settings.md equal to the Settings struct, its
// doc comments and Default(); `make docs` (go test -run TestSettingsDocs
// -update) rewrites it.
func TestSettingsDocs(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "settings.md")
	got, err := markdown()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run make docs", err)
	}
	if string(want) != got {
		t.Errorf("docs/settings.md is stale: run make docs")
	}
}

// docDefaults replace the default shown for values that depend on the
// machine.
var docDefaults = map[string]string{
	"wasm.poolSize": "GOMAXPROCS, at least 2, at most 4",
}

const docsIntro = `# Settings

<!-- Generated from host/settings (fields, doc comments and Default()) by ` + "`make docs`" + `; do not edit. -->

The host's settings, with every default. They are grouped as Kopf's
OperatorSettings are; a key is its group and its name, as in a config file.

- ` + "`kopf-wasm run --config FILE`" + ` (or ` + "`KOPF_WASM_CONFIG=FILE`" + `) reads them from a YAML
  (or JSON) file. Keys left out keep their defaults; the command line and the
  other ` + "`KOPF_WASM_*`" + ` variables win over the file (today only ` + "`KOPF_WASM_CACHE`" + `
  touches a setting: ` + "`wasm.cacheDir`" + `). An unknown key, a value of the wrong type
  or one out of its range is an error naming the key, and the host does not
  start, e.g. ` + "`config settings.yaml: execution.workers: must be at least 1, got 0`" + `.
- Embedders start from ` + "`settings.Default()`" + `, change fields (same names, in Go
  case) and pass the result in ` + "`host.Options.Settings`" + `; ` + "`settings.ReadFile`" + `
  reads a file as the command does.

Durations are Go duration strings: ` + "`30s`, `1m30s`, `100ms`" + `. Lists are YAML
sequences. Example:

` + "```yaml" + `
execution:
  workers: 32
posting:
  level: info
watching:
  serverTimeout: 10m
kube:
  qps: 50
  burst: 100
  errorBackoffs: [1s, 2s, 5s]
` + "```" + `
`

// docEscaper keeps a comment's text as it is in a Markdown table.
var docEscaper = strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;")

// markdown renders docs/settings.md.
func markdown() (string, error) {
	comments, err := fieldComments(".")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(docsIntro)
	def := reflect.ValueOf(Default())
	top := def.Type()
	for i := range top.NumField() {
		gf := top.Field(i)
		group := JSONName(gf)
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", group, oneLine(comments["Settings."+gf.Name]))
		b.WriteString("| Key | Default | Meaning |\n|---|---|---|\n")
		gt := gf.Type
		for _, f := range reflect.VisibleFields(gt) {
			if f.Anonymous {
				continue // its fields follow, as the group's own
			}
			key := group + "." + JSONName(f)
			doc := fieldDoc(comments, gt, f)
			if doc == "" {
				return "", fmt.Errorf("%s (%s.%s) has no doc comment", key, gt.Name(), f.Name)
			}
			if rest, ok := strings.CutPrefix(doc, f.Name+" "); ok {
				doc = "`" + JSONName(f) + "` " + rest // the Go name would puzzle a YAML reader
			}
			value, ok := docDefaults[key]
			if !ok {
				value = "`" + formatValue(def.Field(i).FieldByIndex(f.Index)) + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", key, value, docEscaper.Replace(doc))
		}
	}
	return b.String(), nil
}

// fieldDoc is the doc comment of a group's field, as one line. A field of
// an embedded type (a group's [Lease]) is documented for the group by the
// paragraph of the embedded field's comment that starts with its name,
// else by its own comment.
func fieldDoc(comments map[string]string, group reflect.Type, f reflect.StructField) string {
	if len(f.Index) == 1 {
		return oneLine(comments[group.Name()+"."+f.Name])
	}
	embedded := group.FieldByIndex(f.Index[:len(f.Index)-1])
	for _, para := range strings.Split(comments[group.Name()+"."+embedded.Name], "\n\n") {
		if strings.HasPrefix(para, f.Name+" ") || strings.HasPrefix(para, f.Name+":") {
			return oneLine(para)
		}
	}
	return oneLine(comments[embedded.Type.Name()+"."+f.Name])
}

// oneLine joins a comment's lines and paragraphs.
func oneLine(text string) string { return strings.Join(strings.Fields(text), " ") }

// fieldComments returns the doc comment of every field of the struct types
// in dir's Go files (tests aside), by "Type.Field"; an embedded field is
// named by its type.
func fieldComments(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, field := range st.Fields.List {
				names := field.Names
				if len(names) == 0 { // embedded: named by its type
					if id, ok := field.Type.(*ast.Ident); ok {
						names = []*ast.Ident{id}
					}
				}
				for _, name := range names {
					out[ts.Name.Name+"."+name.Name] = field.Doc.Text()
				}
			}
			return false
		})
	}
	return out, nil
}

// formatValue writes a default as it would be written in a config file.
func formatValue(v reflect.Value) string {
	if v.Type() == durationType {
		return formatDuration(time.Duration(v.Int()))
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	switch v.Kind() {
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// formatDuration writes whole seconds as "60s" rather than "1m0s".
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return d.String()
}
