package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/examples"
	"github.com/gpuplan/gpuplan/examples/synthetic"
)

// addRunFingerprints adds the fingerprint of every recorded example run
// (examples.Records) to fp, under "run NAME": the wavedag workload's
// fingerprint with the workload's bytes and its module's PTX, as gpuplan
// run records it. A tree without the wavedag workload adds none.
func addRunFingerprints(root string, fp evidence.Fingerprints) error {
	base, ok := fp[wavedagWorkload]
	if !ok {
		return nil
	}
	for _, r := range examples.Records() {
		data, ptx, err := recordedInputs(root, r)
		if err != nil {
			return fmt.Errorf("fingerprint of example run %s: %w", r.Name, err)
		}
		fp["run "+r.Name] = evidence.RunFingerprint(base, data, ptx)
	}
	return nil
}

// recordedInputs returns a recorded run's workload bytes and module PTX.
func recordedInputs(root string, r examples.Recorded) (data, ptx []byte, err error) {
	if r.Spec != "" {
		data, err := synthetic.Spec(r.Spec[len("gen:"):])
		return data, synthetic.PTX(), err
	}
	path := filepath.Join(root, r.Path)
	if data, err = os.ReadFile(path); err != nil {
		return nil, nil, fmt.Errorf("%w. Fix: run from the module root", err)
	}
	var w struct {
		Module string `json:"module"`
	}
	if err := json.Unmarshal(data, &w); err != nil || w.Module == "" {
		return nil, nil, fmt.Errorf("%s names no module. Fix: give the example its module", path)
	}
	ptx, err = os.ReadFile(filepath.Join(filepath.Dir(path), w.Module))
	return data, ptx, err
}
