package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// WorkloadsDir is the folder, relative to the module root, whose packages
// are the measured code: each GPU workload package directly under it (for
// example workloads/bfs) is a root of the fingerprint's import graph.
const WorkloadsDir = "workloads"

// SourceFingerprint returns "sha256:" and the hex SHA-256 of the measured
// code under root (the module root): every GPU workload package under
// WorkloadsDir and every package of the module they import, directly or
// not, found from their import declarations (in every build configuration:
// files behind build tags such as cuda count). For each such package it
// hashes its Go files (tests excluded) as syntax printed without comments or
// formatting, keeping only the directives that change the build (//go:
// lines, //export, the cgo preamble), its C and CUDA sources with comments
// and whitespace stripped, and everything in its kernels folder, nested
// folders included (PTX without its comments, line information and debug
// sections). A comment or a reformatting leaves the fingerprint unchanged;
// any change to what is compiled changes it. The benchmark records it in
// every evidence row; the gate recomputes it to find stale evidence.
func SourceFingerprint(root string) (string, error) {
	return SourceFingerprintFS(os.DirFS(root))
}

// SourceFingerprintFS is SourceFingerprint over a file system rooted at the
// module root.
func SourceFingerprintFS(fsys fs.FS) (string, error) {
	files, err := MeasuredFiles(fsys)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	var size [8]byte
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return "", fmt.Errorf("fingerprint: reading %s: %w. Fix: run from the module root, or pass --root", f, err)
		}
		norm, err := normalize(f, data)
		if err != nil {
			return "", err
		}
		h.Write([]byte(f))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(size[:], uint64(len(norm)))
		h.Write(size[:])
		h.Write(norm)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// MeasuredFiles lists, sorted, the files SourceFingerprintFS hashes.
func MeasuredFiles(fsys fs.FS) ([]string, error) {
	module, err := modulePath(fsys)
	if err != nil {
		return nil, err
	}
	roots, err := workloadPackages(fsys)
	if err != nil {
		return nil, err
	}
	pkgs, err := importClosure(fsys, module, roots)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, dir := range pkgs {
		fs, err := packageFiles(fsys, dir)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// modulePath reads the module path from go.mod.
func modulePath(fsys fs.FS) (string, error) {
	f, err := fsys.Open("go.mod")
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w. Fix: run from the module root (the folder with go.mod), or pass --root", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			if p, err := strconv.Unquote(strings.TrimSpace(rest)); err == nil {
				return p, nil
			}
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("fingerprint: go.mod has no module line. Fix: run from the gpuplan module root")
}

// workloadPackages lists the package folders directly under WorkloadsDir.
func workloadPackages(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, WorkloadsDir)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w. Fix: run from the module root, whose %s folder holds the GPU workloads", err, WorkloadsDir)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, path.Join(WorkloadsDir, e.Name()))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("fingerprint: no workload package under %s. Fix: run from the gpuplan module root", WorkloadsDir)
	}
	return dirs, nil
}

// importClosure returns the folders of the roots and of every package of
// the module they import, transitively, sorted.
func importClosure(fsys fs.FS, module string, roots []string) ([]string, error) {
	seen := map[string]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		imps, err := packageImports(fsys, dir)
		if err != nil {
			return nil, err
		}
		for _, imp := range imps {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok && !seen[rel] {
				queue = append(queue, rel)
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for d := range seen {
			if !yield(d) {
				return
			}
		}
	}), nil
}

// goFiles lists a folder's Go files that are not tests.
func goFiles(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: package %s: %w. Fix: check that the imported package exists in the module", dir, err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, path.Join(dir, n))
		}
	}
	return out, nil
}

// packageImports returns the import paths of a package's Go files, in every
// build configuration.
func packageImports(fsys fs.FS, dir string) ([]string, error) {
	files, err := goFiles(fsys, dir)
	if err != nil {
		return nil, err
	}
	var imps []string
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			return nil, fmt.Errorf("fingerprint: %w. Fix: the measured code must parse", err)
		}
		for _, is := range af.Imports {
			if p, err := strconv.Unquote(is.Path.Value); err == nil {
				imps = append(imps, p)
			}
		}
	}
	return imps, nil
}

// sourceExts are the non-Go sources of a package folder that are compiled
// into it.
var sourceExts = []string{".c", ".h", ".cu", ".cuh", ".s", ".S"}

// packageFiles lists a package's measured files: its Go files, its C and
// CUDA sources, and every file under its kernels folder.
func packageFiles(fsys fs.FS, dir string) ([]string, error) {
	files, err := goFiles(fsys, dir)
	if err != nil {
		return nil, err
	}
	entries, _ := fs.ReadDir(fsys, dir)
	for _, e := range entries {
		if !e.IsDir() && slices.Contains(sourceExts, path.Ext(e.Name())) {
			files = append(files, path.Join(dir, e.Name()))
		}
	}
	kernels := path.Join(dir, "kernels")
	if st, err := fs.Stat(fsys, kernels); err == nil && st.IsDir() {
		err := fs.WalkDir(fsys, kernels, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// normalize returns what is hashed of a file: its meaning without comments
// and formatting.
func normalize(name string, data []byte) ([]byte, error) {
	switch path.Ext(name) {
	case ".go":
		return normalizeGo(name, data)
	case ".c", ".h", ".cu", ".cuh":
		return stripC(data), nil
	case ".ptx":
		return stripPTX(data), nil
	}
	return data, nil
}

// normalizeGo returns the file's token stream without comments, one
// space between tokens and every statement end (including the semicolons
// Go inserts at line ends) written as ";", so that layout and comments do
// not count; preceded by the comments that change the build: //go:
// directives, //export lines and the cgo preamble.
func normalizeGo(name string, data []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, data, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w. Fix: the measured code must parse", err)
	}
	var b bytes.Buffer
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//export ") || strings.HasPrefix(c.Text, "//line ") {
				b.WriteString(c.Text + "\n")
			}
		}
	}
	for _, is := range f.Imports {
		if is.Path.Value != `"C"` {
			continue
		}
		doc := is.Doc
		if gd := cgoDecl(f, is); doc == nil && gd != nil {
			doc = gd.Doc
		}
		if doc != nil {
			b.Write(stripC([]byte(doc.Text())))
		}
	}
	writeTokens(&b, fset.File(f.Pos()), data)
	return b.Bytes(), nil
}

// writeTokens writes the tokens of src. A statement end before a closing
// brace or parenthesis, which Go lets a one-line form omit, is dropped.
func writeTokens(b *bytes.Buffer, file *token.File, src []byte) {
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	semi := false
	for {
		_, tok, lit := sc.Scan()
		if semi && tok != token.RBRACE && tok != token.RPAREN && tok != token.EOF {
			b.WriteString("; ")
		}
		semi = tok == token.SEMICOLON
		switch {
		case tok == token.EOF:
			return
		case semi:
		case lit != "":
			b.WriteString(lit + " ")
		default:
			b.WriteString(tok.String() + " ")
		}
	}
}

// cgoDecl returns the import declaration holding the `import "C"` spec.
func cgoDecl(f *ast.File, is *ast.ImportSpec) *ast.GenDecl {
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT && slices.Contains(gd.Specs, ast.Spec(is)) {
			return gd
		}
	}
	return nil
}
