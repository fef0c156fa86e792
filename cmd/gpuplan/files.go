package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to path whole: to a temporary file beside it,
// renamed into place, so that a reader of the folder never sees half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w. Fix: check that the directory exists and is writable", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w. Fix: check the free space of its file system", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w. Fix: check the free space of its file system", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w. Fix: check the directory's permissions", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w. Fix: check that %s is not a directory", path, err, path)
	}
	return nil
}
