package evidence

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// quotedRun matches one quoted echo and the "..." of a cut.
var quotedRun = regexp.MustCompile(`"(?:[^"\\]|\\.)*"(?:\.\.\.)?`)

// TestLongFieldsAreEchoedCut reads inputs whose header, field or claim
// name is megabytes long: every message names where, and repeats the text
// quoted and cut to quote.MaxEcho bytes.
func TestLongFieldsAreEchoedCut(t *testing.T) {
	demo, err := os.ReadFile(filepath.Join("testdata", "results", "grid-demo.csv"))
	require.NoError(t, err)
	long := strings.Repeat("G", 3<<20)
	lines := strings.SplitN(string(demo), "\n", 4)
	tests := []struct {
		name  string
		parse func() error
		where string
	}{
		{"results header", func() error {
			_, err := ReadSamples("run.csv", strings.NewReader(long+"\n"+string(demo)))
			return err
		}, "run.csv:1:1 (gpuplan_version)"},
		{"results device name", func() error {
			row := strings.Replace(lines[2], "Test GPU X", long, 1)
			_, err := ReadSamples("run.csv", strings.NewReader(strings.Join([]string{lines[0], lines[1], lines[2], row, lines[3]}, "\n")))
			return err
		}, "run.csv:4:4 (device_name)"},
		{"results number", func() error {
			row := strings.Replace(lines[2], ",262144,", ","+strings.Repeat("9", 1<<20)+",", 1)
			_, err := ReadSamples("run.csv", strings.NewReader(strings.Join([]string{lines[0], lines[1], row}, "\n")))
			return err
		}, "run.csv:3:9 (graph_nodes)"},
		{"vyre header", func() error {
			_, err := ParseSpeedupCSV(long + "\n")
			return err
		}, "line 1, column 1 (backend_id)"},
		{"session header", func() error {
			_, err := ParseSessionCSV(long + "\n")
			return err
		}, "line 1, column 1 (backend_id)"},
		{"claim name", func() error {
			claim := `{"name":"` + long + `","workload":"grid-2048","baseline":"host-loop","candidate":"megakernel","metric":"wall_ns","min_speedup":5,"file":"grid-2048.csv"}`
			_, err := ParseGates("gates.json", []byte(`{"claims":[`+claim+`,`+claim+`]}`))
			return err
		}, `field "claims[1].name"`},
		{"claim workload", func() error {
			_, err := ParseGates("gates.json", []byte(`{"claims":[{"name":"x","workload":"`+long+` x","baseline":"host-loop","candidate":"megakernel","metric":"wall_ns","min_speedup":5,"file":"grid-2048.csv"}]}`))
			return err
		}, `field "claims[0].workload"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse()
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, tc.where)
			assert.Contains(t, msg, "Fix:")
			assert.Less(t, len(msg), 4096, "the message repeats the input whole")
			for _, q := range quotedRun.FindAllString(msg, -1) {
				assert.LessOrEqual(t, len(q), quote.MaxEcho, q[:min(len(q), 80)])
			}
		})
	}
}
