package main

import (
	"bufio"
	"bytes"
	"os"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// loadEvidenceArgs returns the report's inputs when they are load evidence
// (each a file whose header is the load header), nil when none is, and an
// error when they mix load and benchmark evidence.
func loadEvidenceArgs(args []string) ([]string, error) {
	var loads, others []string
	for _, a := range args {
		if isLoadFile(a) {
			loads = append(loads, a)
		} else {
			others = append(others, a)
		}
	}
	if len(loads) > 0 && len(others) > 0 {
		return nil, usagef("gpuplan report: %s is load evidence but %s is not. Fix: report load evidence and benchmark evidence in separate runs", quote.Text(loads[0]), quote.Text(others[0]))
	}
	return loads, nil
}

// isLoadFile reports whether path is a file that starts with the load
// header.
func isLoadFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	line, err := bufio.NewReaderSize(f, 4096).ReadString('\n')
	return (err == nil || line != "") && evidence.IsLoadHeader(line)
}

// reportLoad tabulates (and charts) load evidence: each setting, and each
// batched setting's throughput over the serial one.
func (o *reportOptions) reportLoad(e *env, paths []string, limit int64) error {
	var rows []evidence.LoadRow
	for _, p := range paths {
		data, err := input.ReadFile(p, e.stdin, limit)
		if err != nil {
			return err
		}
		r, err := evidence.ReadLoadCSV(p, bytes.NewReader(data))
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if o.chart != "" {
		var buf bytes.Buffer
		if err := writeLoadChart(&buf, rows, chartFormat(o.chart)); err != nil {
			return err
		}
		if err := writeFileAtomic(o.chart, buf.Bytes()); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	switch o.format {
	case formatCSV:
		if err := evidence.WriteLoadCSV(&buf, rows); err != nil {
			return err
		}
	case formatJSON:
		if err := writeJSON(&buf, rows); err != nil {
			return err
		}
	case formatBenchfmt:
		return usagef("gpuplan report: --format benchfmt writes benchmark samples, and load evidence holds settings. Fix: use markdown, csv or json")
	default:
		buf.WriteString(evidence.LoadMarkdown(rows))
	}
	if o.output == "-" {
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	if err := writeFileAtomic(o.output, buf.Bytes()); err != nil {
		return err
	}
	wrote(e.stdout, o.output, o.chart)
	return nil
}
