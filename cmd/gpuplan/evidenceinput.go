package main

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/input"
)

// evidenceLimitFlag adds --max-input-bytes, the size limit of every input
// file (here each evidence CSV) a command reads.
func evidenceLimitFlag(f *flags) *int64 {
	f.readsInput()
	return &f.env.inputLimit
}

// loadEvidenceFile reads one evidence CSV, or standard input for "-",
// under limit bytes.
func (e *env) loadEvidenceFile(path string, limit int64) (evidence.ResultFile, error) {
	data, err := input.ReadFile(path, e.stdin, limit)
	if err != nil {
		return evidence.ResultFile{}, err
	}
	source := path
	if path == input.Stdin {
		source = "<stdin>"
	}
	samples, err := evidence.ReadSamples(source, bytes.NewReader(data))
	if err != nil {
		return evidence.ResultFile{}, err
	}
	return evidence.ResultFile{Path: filepath.ToSlash(source), Samples: samples}, nil
}

// loadEvidence reads every input named on the command line: an evidence
// CSV, "-" for standard input (at most once), or a directory, whose *.csv
// files are read in path order with their paths joined to it.
func (e *env) loadEvidence(cmd string, paths []string, limit int64) ([]evidence.ResultFile, error) {
	stdin := 0
	for _, p := range paths {
		if p == input.Stdin {
			stdin++
		}
	}
	if stdin > 1 {
		return nil, usagef("gpuplan %s: standard input (-) is named %d times. Fix: name it once", cmd, stdin)
	}
	var out []evidence.ResultFile
	for _, p := range paths {
		if info, err := os.Stat(p); p != input.Stdin && err == nil && info.IsDir() {
			files, err := evidence.LoadResultsLimit(p, limit)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				f.Path = filepath.ToSlash(filepath.Join(p, f.Path))
				out = append(out, f)
			}
			continue
		}
		f, err := e.loadEvidenceFile(p, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
