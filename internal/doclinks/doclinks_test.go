// Package doclinks checks the repository's Markdown: every relative link
// in README.md, BENCHMARKS.md and docs/ names a file or folder that exists,
// and a link's #anchor names a heading of the Markdown file it points to
// (GitHub's heading ids). It has no code of its own, only this test, which
// make unit and make test run.
package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// link matches an inline Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// fence matches the start or end of a fenced code block.
var fence = regexp.MustCompile("^\\s*```")

func TestMarkdownLinks(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		for _, l := range links(t, f) {
			target, anchor, _ := strings.Cut(l.target, "#")
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", rel(root, f), l.line, l.target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if anchors[path] == nil {
				anchors[path] = headingIDs(t, path)
			}
			if !anchors[path][anchor] {
				t.Errorf("%s:%d: link to %s: %s has no heading with that id", rel(root, f), l.line, l.target, rel(root, path))
			}
		}
	}
}

// mdLink is a relative link and the line it is on.
type mdLink struct {
	target string
	line   int
}

// links returns the relative links of a Markdown file, outside code blocks
// and code spans.
func links(t *testing.T, path string) []mdLink {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []mdLink
	inCode := false
	for i, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, mdLink{target: target, line: i + 1})
		}
	}
	return out
}

// stripCodeSpans blanks `code spans`, where brackets are not links.
func stripCodeSpans(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// headingIDs returns the ids GitHub gives the headings of a Markdown file.
func headingIDs(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		id := slug(strings.TrimLeft(line, "#"))
		if n := seen[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// slug is GitHub's heading id: lower case, letters, digits, '-' and '_'
// kept, spaces made '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// rel is p relative to root, for messages.
func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
