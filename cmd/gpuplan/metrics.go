package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpuplan/gpuplan/executor"
)

// writeMetrics writes the Prometheus text exposition of s to path, or to
// standard output for "-". A file is written whole to a temporary file
// beside it and renamed into place, so a scraper that reads the folder
// (node_exporter's textfile collector, say) never sees half of it.
func (e *env) writeMetrics(path string, s executor.TelemetrySnapshot) error {
	var buf bytes.Buffer
	if err := s.WritePrometheus(&buf); err != nil {
		return err
	}
	if path == "-" {
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing metrics to %s: %w. Fix: check that the directory exists and is writable", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing metrics to %s: %w. Fix: check the free space of its file system", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing metrics to %s: %w. Fix: check the free space of its file system", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing metrics to %s: %w. Fix: check the directory's permissions", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing metrics to %s: %w. Fix: check that %s is not a directory", path, err, path)
	}
	return nil
}
