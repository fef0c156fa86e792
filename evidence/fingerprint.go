package evidence

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// FingerprintPatterns are the files whose contents decide whether evidence
// is stale: the CUDA kernels (source and PTX) of every package and the
// executor that launches them, its C shim over the driver included. Test
// files are excluded: they do not change what is measured.
var fingerprintPatterns = []string{"*/kernels/*.ptx", "*/kernels/*.cu", "executor/*.go", "executor/*.c", "executor/*.h"}

// FingerprintPatterns returns the glob patterns, relative to the module
// root, of the files SourceFingerprint hashes.
func FingerprintPatterns() []string { return append([]string(nil), fingerprintPatterns...) }

// SourceFingerprint returns "sha256:" and the hex SHA-256 of the kernel and
// executor sources under root (the module root): every file matching
// FingerprintPatterns except *_test.go, sorted by slash-separated relative
// path, each hashed as its path, a NUL byte, its length as 8 little-endian
// bytes and its contents. The benchmark records this value in every
// evidence row; the gate recomputes it to find stale evidence. It needs no
// VCS, only the files.
func SourceFingerprint(root string) (string, error) {
	return SourceFingerprintFS(os.DirFS(root))
}

// SourceFingerprintFS is SourceFingerprint over a file system rooted at the
// module root.
func SourceFingerprintFS(fsys fs.FS) (string, error) {
	var files []string
	for _, pat := range fingerprintPatterns {
		m, err := fs.Glob(fsys, pat)
		if err != nil {
			return "", fmt.Errorf("fingerprint pattern %s: %w. Fix: report this as a bug", pat, err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, path.Clean(f))
			}
		}
	}
	sort.Strings(files)
	h := sha256.New()
	var size [8]byte
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return "", fmt.Errorf("fingerprint: reading %s: %w. Fix: run from the module root, or pass --root", f, err)
		}
		h.Write([]byte(f))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(size[:], uint64(len(data)))
		h.Write(size[:])
		h.Write(data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
