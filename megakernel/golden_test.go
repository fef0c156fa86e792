package megakernel_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/ from the current output")

// planScenario plans one workload file the way `gpuplan plan` does and
// returns the text plan, or "error: <message>".
func planScenario(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "error: " + err.Error()
	}
	source := filepath.Base(path)
	w, err := megakernel.DecodeWorkload(source, data)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var dev occupancy.Device
	profile := ""
	if w.Device != nil {
		p, err := occupancy.LookupProfile(*w.Device)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		dev, profile = p.Device, p.Short
	} else {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), *w.DeviceFile))
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		if dev, err = occupancy.LoadDeviceJSON(*w.DeviceFile, raw); err != nil {
			return "error: " + err.Error() + "\n"
		}
	}
	p, err := megakernel.PlanWorkload(source, w, dev, profile, nil)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b bytes.Buffer
	if err := p.WriteText(&b); err != nil {
		return "error: " + err.Error() + "\n"
	}
	return b.String()
}

// TestGoldenScenarios replays testdata/scenarios/*.json (workloads, some
// invalid on purpose) against the *.golden plan text next to them. Run
// `go test ./megakernel -run Golden -rewrite` to regenerate.
func TestGoldenScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.json")
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "device-") {
			continue // device profiles used by scenarios
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			got := planScenario(f)
			golden := strings.TrimSuffix(f, ".json") + ".golden"
			if *rewrite {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden file: run go test ./megakernel -run Golden -rewrite")
			require.Equal(t, string(want), got)
		})
	}
	require.GreaterOrEqual(t, n, 10)
}
