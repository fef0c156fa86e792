package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"maps"
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

// Fingerprints maps each GPU workload package (its folder relative to the
// module root, for example "workloads/bfs") to its source fingerprint.
type Fingerprints map[string]string

// Contains reports whether fp is the fingerprint of one of the workloads.
func (f Fingerprints) Contains(fp string) bool {
	for _, v := range f {
		if v == fp {
			return true
		}
	}
	return false
}

// String lists the workloads and their fingerprints, sorted.
func (f Fingerprints) String() string {
	var parts []string
	for _, w := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, w+" "+f[w])
	}
	return strings.Join(parts, ", ")
}

// WorkloadFingerprint returns "sha256:" and the hex SHA-256 of the code a
// GPU workload measures: the workload package (a folder under
// WorkloadsDir, for example "workloads/bfs") and every package of the
// module it imports, directly or not, found from their import declarations
// in every build configuration (files behind build tags such as cuda
// count). For each such package it hashes its Go files (tests excluded) as
// their token stream without comments or layout, keeping only the comments
// that change the build (//go: directives, //export lines, the cgo
// preamble), its C and CUDA sources with comments and whitespace stripped,
// and everything in its kernels folder, nested folders included (PTX
// without its comments, line information and debug sections). A comment or
// a reformatting leaves the fingerprint unchanged; any change to what is
// compiled changes it. A benchmark records it in every evidence row; the
// gate recomputes it to find stale evidence.
func WorkloadFingerprint(root, workload string) (string, error) {
	return WorkloadFingerprintFS(os.DirFS(root), workload)
}

// WorkloadFingerprintFS is WorkloadFingerprint over a file system rooted
// at the module root.
func WorkloadFingerprintFS(fsys fs.FS, workload string) (string, error) {
	return workloadFingerprint(fsys, workload, digests{})
}

func workloadFingerprint(fsys fs.FS, workload string, d digests) (string, error) {
	files, err := measuredFiles(fsys, []string{path.Clean(workload)})
	if err != nil {
		return "", err
	}
	return hashFiles(fsys, files, d)
}

// SourceFingerprints returns the fingerprint of every GPU workload package
// under WorkloadsDir: evidence is fresh when its fingerprint is one of
// them, so a change to one workload leaves another's evidence fresh.
func SourceFingerprints(root string) (Fingerprints, error) {
	return SourceFingerprintsFS(os.DirFS(root))
}

// SourceFingerprintsFS is SourceFingerprints over a file system rooted at
// the module root.
func SourceFingerprintsFS(fsys fs.FS) (Fingerprints, error) {
	roots, err := workloadPackages(fsys)
	if err != nil {
		return nil, err
	}
	out, d := Fingerprints{}, digests{}
	for _, w := range roots {
		if out[w], err = workloadFingerprint(fsys, w, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// digests caches each file's digest while the fingerprints of several
// workloads, which share most of their packages, are computed.
type digests map[string][sha256.Size]byte

// digest returns the SHA-256 of a file's normalized form.
func (d digests) digest(fsys fs.FS, f string) ([sha256.Size]byte, error) {
	if sum, ok := d[f]; ok {
		return sum, nil
	}
	var sum [sha256.Size]byte
	data, err := fs.ReadFile(fsys, f)
	if err != nil {
		return sum, fmt.Errorf("fingerprint: reading %s: %w. Fix: run from the module root, or pass --root", f, err)
	}
	h := sha256.New()
	w := bufio.NewWriter(h)
	if err := writeNormalized(w, f, data); err != nil {
		return sum, err
	}
	if err := w.Flush(); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	d[f] = sum
	return sum, nil
}

// hashFiles hashes each file's path and normalized digest, in order.
func hashFiles(fsys fs.FS, files []string, d digests) (string, error) {
	h := sha256.New()
	for _, f := range files {
		sum, err := d.digest(fsys, f)
		if err != nil {
			return "", err
		}
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(sum[:])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// MeasuredFiles lists, sorted, the files the fingerprint of workload
// hashes.
func MeasuredFiles(fsys fs.FS, workload string) ([]string, error) {
	return measuredFiles(fsys, []string{path.Clean(workload)})
}

func measuredFiles(fsys fs.FS, roots []string) ([]string, error) {
	module, err := modulePath(fsys)
	if err != nil {
		return nil, err
	}
	for _, r := range roots {
		if files, err := goFiles(fsys, r); err != nil || len(files) == 0 {
			return nil, fmt.Errorf("fingerprint: %s holds no Go package. Fix: name a workload package folder such as workloads/bfs", r)
		}
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

// writeNormalized writes what is hashed of a file: its meaning without
// comments and formatting.
func writeNormalized(w *bufio.Writer, name string, data []byte) error {
	switch path.Ext(name) {
	case ".go":
		return writeGo(w, name, data)
	case ".c", ".h", ".cu", ".cuh":
		_, err := w.Write(stripC(data))
		return err
	case ".ptx":
		writePTX(w, data)
		return nil
	}
	_, err := w.Write(data)
	return err
}

// commentText returns the text of a Go comment without its markers.
func commentText(c string) string {
	if t, ok := strings.CutPrefix(c, "//"); ok {
		return t + "\n"
	}
	return strings.TrimSuffix(strings.TrimPrefix(c, "/*"), "*/") + "\n"
}

// writeGo writes the file's token stream without comments: one space
// between tokens and every statement end (including the semicolons Go
// inserts at line ends) written as ";", so that layout and comments do not
// count; and the comments that change the build: //go: directives, //export
// and //line lines, and the cgo preamble (the comments just above `import
// "C"`).
func writeGo(w *bufio.Writer, name string, src []byte) error {
	fset := token.NewFileSet()
	var sc scanner.Scanner
	errs := 0
	sc.Init(fset.AddFile(name, -1, len(src)), src, func(token.Position, string) { errs++ }, scanner.ScanComments)
	var pending, preamble []string // comments since the last token; those above the last import
	semi, prev := false, token.ILLEGAL
	for {
		_, tok, lit := sc.Scan()
		if tok == token.COMMENT {
			if strings.HasPrefix(lit, "//go:") || strings.HasPrefix(lit, "//export ") || strings.HasPrefix(lit, "//line ") {
				w.WriteString(lit + "\n")
			}
			pending = append(pending, lit)
			continue
		}
		if tok == token.IMPORT {
			preamble = pending
		}
		if prev == token.IMPORT && tok == token.STRING && lit == `"C"` {
			for _, c := range preamble {
				w.Write(stripC([]byte(commentText(c))))
			}
		}
		pending, prev = nil, tok
		if semi && tok != token.RBRACE && tok != token.RPAREN && tok != token.EOF {
			w.WriteString("; ")
		}
		semi = tok == token.SEMICOLON
		switch {
		case tok == token.EOF:
			if errs > 0 {
				return fmt.Errorf("fingerprint: %s has %d lexical errors. Fix: the measured code must compile", name, errs)
			}
			return nil
		case semi:
		case lit != "":
			w.WriteString(lit + " ")
		default:
			w.WriteString(tok.String() + " ")
		}
	}
}

// runFingerprintDomain separates run fingerprints from every other hash.
const runFingerprintDomain = "gpuplan.run-fingerprint.v1"

// RunFingerprint is the fingerprint of a run of the user's own kernels
// (gpuplan run): the wavedag workload's fingerprint, the workload file's
// bytes and the module's PTX without its comments, line information or
// debug sections. Changing the runtime, the workload or the kernels makes
// the run's evidence stale.
func RunFingerprint(workloadFingerprint string, workload, ptx []byte) string {
	h := sha256.New()
	w := bufio.NewWriter(h)
	for _, part := range [][]byte{[]byte(runFingerprintDomain), []byte(workloadFingerprint), workload} {
		fmt.Fprintf(w, "%d:", len(part))
		w.Write(part)
	}
	var p bytes.Buffer
	pw := bufio.NewWriter(&p)
	writePTX(pw, ptx)
	pw.Flush()
	fmt.Fprintf(w, "%d:", p.Len())
	w.Write(p.Bytes())
	w.Flush()
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
