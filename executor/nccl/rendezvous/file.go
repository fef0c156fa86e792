package rendezvous

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// maxFileLen bounds the address file a joining rank reads.
const maxFileLen = 512

// writeAddressFile writes addr and a newline to path atomically: into a
// temporary file of the same directory, then renamed over path, so that a
// reader sees the whole address or none.
func writeAddressFile(path, addr string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(addr + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// readAddressFile returns the host:port that path holds.
func readAddressFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileLen+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxFileLen {
		return "", fmt.Errorf("%s is longer than %d bytes, so it holds no address", path, maxFileLen)
	}
	addr := strings.TrimSpace(string(b))
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("%s holds %q, not host:port", path, addr)
	}
	return addr, nil
}

// removeAddressFile removes path if it still holds addr (a later rank 0
// may have written its own).
func removeAddressFile(path, addr string) {
	if got, err := readAddressFile(path); err == nil && got == addr {
		_ = os.Remove(path)
	}
}
