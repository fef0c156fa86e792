package bfs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeSection returns the README's section under heading, up to the next
// "## " heading.
func readmeSection(t *testing.T, heading string) string {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	require.True(t, ok, "README.md has no %q section", heading)
	sec, _, _ := strings.Cut(rest, "\n## ")
	return sec
}

// funcSource returns the source of the function name in file, comments
// inside it included.
func funcSource(t *testing.T, file, name string) string {
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	require.NoError(t, err)
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return string(src[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset])
		}
	}
	t.Fatalf("%s has no func %s", file, name)
	return ""
}

// The README's "## The library" section shows Example (without its error
// checks): every line of its Go block is a line of Example, in order, so
// the README cannot drift from the code the tests run.
func TestReadmeLibraryExample(t *testing.T) {
	sec := readmeSection(t, "## The library")
	_, block, ok := strings.Cut(sec, "```go\n")
	require.True(t, ok, "the section has no Go block")
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok, "the section's Go block is not closed")
	var body []string
	for _, l := range strings.Split(funcSource(t, "example_test.go", "Example"), "\n") {
		body = append(body, strings.TrimSpace(l))
	}
	shown := 0
	next := 0
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		i := next
		for i < len(body) && body[i] != l {
			i++
		}
		require.Less(t, i, len(body), "README.md's library example line %q is not a line of Example in workloads/bfs/example_test.go after %q (or is out of order)", l, body[max(0, next-1)])
		next = i + 1
		shown++
	}
	assert.GreaterOrEqual(t, shown, 10, "the library example shows too little")
}

// Every Example the section names for a package ("- `pkg`: `ExampleX`, ...")
// exists in that package's tests.
func TestReadmeLibraryExamplesExist(t *testing.T) {
	sec := readmeSection(t, "## The library")
	item := regexp.MustCompile("(?m)^- `([a-z/]+)`:((?:.*\n  .*)*.*)$")
	name := regexp.MustCompile("`(Example[A-Za-z0-9_]*)`")
	items := item.FindAllStringSubmatch(sec, -1)
	require.NotEmpty(t, items, "the section lists no package's Examples")
	for _, m := range items {
		pkg := m[1]
		files, err := filepath.Glob(filepath.Join("../..", pkg, "*_test.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "README.md names package %s, which has no tests", pkg)
		var src strings.Builder
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			src.Write(b)
		}
		names := name.FindAllStringSubmatch(m[2], -1)
		assert.NotEmpty(t, names, "README.md lists no Example for %s", pkg)
		for _, n := range names {
			assert.Contains(t, src.String(), "\nfunc "+n[1]+"() {", "README.md names %s.%s, which does not exist", pkg, n[1])
		}
	}
}
