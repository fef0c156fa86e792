package main

import (
	"bytes"
	"fmt"

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
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
