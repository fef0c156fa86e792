package evidence

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fingerprintTree is a small module: workload w imports lib (cgo, a build
// tag, an embed) which imports deep; other is imported by nobody.
func fingerprintTree() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"go.mod":                      file("module example.com/m\n\ngo 1.26\n"),
		"workloads/w/w.go":            file("package w\n\nimport \"example.com/m/lib\"\n\n// Run runs.\nfunc Run() int { return lib.F() + 1 }\n"),
		"workloads/w/w_test.go":       file("package w\n\nfunc helper() {}\n"),
		"workloads/w/kernels/k.cu":    file("// kernel\n#include \"k.h\"\n__global__ void k(int *a) { a[0] = 1; } // set\n"),
		"workloads/w/kernels/k.h":     file("#define LINE 32u\n"),
		"workloads/w/kernels/k.ptx":   file(".version 7.8\n\t.loc 1 3 0\n\tst.u32 [%rd1], 1; // store\n\t.file 1 \"k.cu\"\n\t.section .debug_str\n{ garbage }\n"),
		"workloads/w/internal/gen.go": file("package main\n\nimport \"example.com/m/other\"\n\nfunc main() { other.G() }\n"),
		"lib/lib.go":                  file("package lib\n\nimport \"example.com/m/lib/deep\"\n\n//go:embed data.txt\nvar data string\n\n// F returns a default.\nfunc F() int { return deep.D + len(data) }\n"),
		"lib/lib_cuda.go":             file("//go:build cuda\n\npackage lib\n\n// #include \"shim.h\"\nimport \"C\"\n\nfunc g() int { return 2 }\n"),
		"lib/shim.c":                  file("/* shim */ int shim(void) { return 0; }\n"),
		"lib/deep/deep.go":            file("package deep\n\n// D is a default that changes what is measured.\nconst D = 4\n"),
		"other/other.go":              file("package other\n\n// G does nothing.\nfunc G() {}\n"),
	}
}

// TestSourceFingerprintEdits checks both directions: an edit that does not
// change what is compiled (comments, layout, tests, unimported packages)
// keeps the fingerprint; one that does (code, a build tag, an embed
// pattern, the cgo preamble, kernels, nested kernel files) changes it.
func TestSourceFingerprintEdits(t *testing.T) {
	base, err := WorkloadFingerprintFS(fingerprintTree(), "workloads/w")
	require.NoError(t, err)
	assert.True(t, validFingerprint(base), base)
	for _, tt := range []struct {
		name, file, old, new string
		changes              bool
	}{
		{"a Go comment", "lib/lib.go", "// F returns a default.", "// F returns the default value.", false},
		{"Go layout", "workloads/w/w.go", "func Run() int { return lib.F() + 1 }", "func Run() int {\n\treturn lib.F() + 1\n}", false},
		{"a test file", "workloads/w/w_test.go", "func helper() {}", "func helper() { panic(1) }", false},
		{"an unimported package", "other/other.go", "func G() {}", "func G() { println() }", false},
		{"a generator under the workload", "workloads/w/internal/gen.go", "other.G()", "other.G(); other.G()", false},
		{"a CUDA comment", "workloads/w/kernels/k.cu", "// set", "// sets the first word", false},
		{"CUDA layout", "workloads/w/kernels/k.cu", "a[0] = 1;", "a[0]   =   1;", false},
		{"PTX line information", "workloads/w/kernels/k.ptx", ".loc 1 3 0", ".loc 1 9 0", false},
		{"a PTX comment", "workloads/w/kernels/k.ptx", "// store", "// the store", false},
		{"a default deep in the import graph", "lib/deep/deep.go", "const D = 4", "const D = 32", true},
		{"Go code", "workloads/w/w.go", "+ 1", "+ 2", true},
		{"a file behind a build tag", "lib/lib_cuda.go", "return 2", "return 3", true},
		{"a build constraint", "lib/lib_cuda.go", "//go:build cuda", "//go:build cuda && linux", true},
		{"the cgo preamble", "lib/lib_cuda.go", "// #include \"shim.h\"", "// #include \"shim2.h\"", true},
		{"an embed pattern", "lib/lib.go", "//go:embed data.txt", "//go:embed other.txt", true},
		{"C code", "lib/shim.c", "return 0;", "return 1;", true},
		{"CUDA code", "workloads/w/kernels/k.cu", "a[0] = 1;", "a[0] = 2;", true},
		{"a kernel header", "workloads/w/kernels/k.h", "32u", "64u", true},
		{"a PTX instruction", "workloads/w/kernels/k.ptx", "st.u32 [%rd1], 1;", "st.u32 [%rd1], 2;", true},
	} {
		tree := fingerprintTree()
		src := string(tree[tt.file].Data)
		require.Contains(t, src, tt.old, tt.name)
		tree[tt.file].Data = []byte(strings.Replace(src, tt.old, tt.new, 1))
		got, err := WorkloadFingerprintFS(tree, "workloads/w")
		require.NoError(t, err, tt.name)
		if tt.changes {
			assert.NotEqual(t, base, got, "%s must change the fingerprint", tt.name)
		} else {
			assert.Equal(t, base, got, "%s must not change the fingerprint", tt.name)
		}
	}
	tree := fingerprintTree()
	tree["workloads/w/kernels/sub/extra.cuh"] = &fstest.MapFile{Data: []byte("#define X 1\n")}
	got, err := WorkloadFingerprintFS(tree, "workloads/w")
	require.NoError(t, err)
	assert.NotEqual(t, base, got, "a file in a nested kernels folder counts")
}

func TestSourceFingerprintErrors(t *testing.T) {
	for name, edit := range map[string]func(fstest.MapFS){
		"no go.mod":      func(m fstest.MapFS) { delete(m, "go.mod") },
		"no module line": func(m fstest.MapFS) { m["go.mod"].Data = []byte("go 1.26\n") },
		"no workloads": func(m fstest.MapFS) {
			delete(m, "workloads/w/w.go")
			delete(m, "workloads/w/w_test.go")
			removePrefix(m, "workloads/")
		},
		"missing import": func(m fstest.MapFS) { delete(m, "lib/deep/deep.go") },
		"lexical error":  func(m fstest.MapFS) { m["lib/lib.go"].Data = []byte("package lib\nvar s = \"unterminated\n") },
	} {
		tree := fingerprintTree()
		edit(tree)
		_, err := WorkloadFingerprintFS(tree, "workloads/w")
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
}

func removePrefix(m fstest.MapFS, prefix string) {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			delete(m, k)
		}
	}
}

// TestSourceFingerprintOfThisModule checks the real tree: the BFS workload
// and its imports are measured, the command and the evidence package are
// not, and changing the queue items' default edge count changes the
// fingerprint while rewording its comment does not.
func TestSourceFingerprintOfThisModule(t *testing.T) {
	root := os.DirFS("..")
	files, err := MeasuredFiles(root, "workloads/bfs")
	require.NoError(t, err)
	for _, f := range []string{"workloads/bfs/kernels.go", "workloads/bfs/kernels/bfs.cu", "workloads/bfs/kernels/bfs_abi.h",
		"executor/cuda_backend.go", "executor/shim_cuda.c", "frontier/generate.go", "internal/kernelabi/kernelabi.go"} {
		assert.Contains(t, files, f)
	}
	for _, f := range files {
		assert.False(t, strings.HasPrefix(f, "cmd/") || strings.HasPrefix(f, "evidence/") || strings.HasSuffix(f, "_test.go"), f)
	}
	tree := fstest.MapFS{}
	for _, f := range append(files, "go.mod") {
		data, err := fs.ReadFile(root, f)
		require.NoError(t, err)
		tree[f] = &fstest.MapFile{Data: data}
	}
	base, err := WorkloadFingerprintFS(tree, "workloads/bfs")
	require.NoError(t, err)
	src := string(tree["workloads/bfs/kernels.go"].Data)
	edit := func(old, new string) string {
		require.Contains(t, src, old)
		tree["workloads/bfs/kernels.go"].Data = []byte(strings.Replace(src, old, new, 1))
		got, err := WorkloadFingerprintFS(tree, "workloads/bfs")
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, base, edit("// DefaultChunk is the largest number of edges", "// DefaultChunk is the most edges"))
	assert.NotEqual(t, base, edit("const DefaultChunk = 256\n", "const DefaultChunk = 512\n"))
}

// TestSourceFingerprintsPerWorkload checks that each workload has its own
// fingerprint: a change to one leaves the other's unchanged, and a change
// to a package both import changes both.
func TestSourceFingerprintsPerWorkload(t *testing.T) {
	tree := fingerprintTree()
	tree["workloads/v/v.go"] = &fstest.MapFile{Data: []byte("package v\n\nimport \"example.com/m/lib/deep\"\n\nconst V = deep.D\n")}
	before, err := SourceFingerprintsFS(tree)
	require.NoError(t, err)
	require.Len(t, before, 2)
	assert.True(t, before.Contains(before["workloads/v"]))
	assert.False(t, before.Contains("sha256:"+strings.Repeat("0", 64)))
	assert.Contains(t, before.String(), "workloads/v sha256:")
	tree["workloads/w/w.go"].Data = []byte(strings.Replace(string(tree["workloads/w/w.go"].Data), "+ 1", "+ 2", 1))
	after, err := SourceFingerprintsFS(tree)
	require.NoError(t, err)
	assert.Equal(t, before["workloads/v"], after["workloads/v"], "v does not import w")
	assert.NotEqual(t, before["workloads/w"], after["workloads/w"])
	tree["lib/deep/deep.go"].Data = []byte("package deep\n\nconst D = 5\n")
	shared, err := SourceFingerprintsFS(tree)
	require.NoError(t, err)
	assert.NotEqual(t, after["workloads/v"], shared["workloads/v"])
	assert.NotEqual(t, after["workloads/w"], shared["workloads/w"])
	_, err = WorkloadFingerprintFS(tree, "workloads/none")
	assert.ErrorContains(t, err, "holds no Go package")
}
