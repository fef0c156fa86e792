package wavedag

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// OutputFile describes one written output in outputs.json.
type OutputFile struct {
	Buffer string `json:"buffer"`
	File   string `json:"file"`
	Type   string `json:"type"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// OutputsManifest is the file that lists the written outputs.
const OutputsManifest = "outputs.json"

// WriteOutputs writes each output's bytes to DIR/BUFFER.bin (raw, little
// endian, as on the device) and a manifest, outputs.json, with each one's
// type, size and SHA-256.
func WriteOutputs(dir string, p *Program, outputs [][]byte) error {
	if len(outputs) != len(p.Workload.Outputs) {
		return fmt.Errorf("%d outputs for %d declared. Fix: write the outputs of one run", len(outputs), len(p.Workload.Outputs))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w. Fix: pass a directory you can write", err)
	}
	files := make([]OutputFile, len(outputs))
	for i, o := range p.Workload.Outputs {
		sum := sha256.Sum256(outputs[i])
		files[i] = OutputFile{Buffer: o.Buffer, File: o.Buffer + ".bin", Type: string(o.OutputType()), Bytes: len(outputs[i]), SHA256: hex.EncodeToString(sum[:])}
		if err := os.WriteFile(filepath.Join(dir, files[i].File), outputs[i], 0o644); err != nil {
			return fmt.Errorf("writing output %s: %w. Fix: check the directory is writable", o.Buffer, err)
		}
	}
	data, err := json.MarshalIndent(struct {
		Workload string       `json:"workload"`
		Outputs  []OutputFile `json:"outputs"`
	}{p.Name(), files}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, OutputsManifest), append(data, '\n'), 0o644)
}

// GeneratedPTX returns the PTX gpuplan generates for p on target sm: the
// launch arms' wrappers and the schedulers' dispatch, as Open links them.
func GeneratedPTX(p *Program, sm int) (launch, dispatch []byte) {
	return GenerateLaunch(p.Funcs, p.launchWrappers(), sm), GenerateDispatch(p.Funcs, sm)
}

// launchWrappers lists the launch wrappers the waves need, in first use.
func (p *Program) launchWrappers() []LaunchWrapper {
	var out []LaunchWrapper
	seen := map[LaunchWrapper]bool{}
	for v := range p.Waves() {
		lw := LaunchWrapper{Fn: p.waveFn[v], Prologue: p.Prologue(v)}
		if !seen[lw] {
			seen[lw] = true
			out = append(out, lw)
		}
	}
	return out
}
