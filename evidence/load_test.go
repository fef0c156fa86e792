package evidence

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadRow is a valid row of the given setting.
func loadRow(mode string, clients uint64, qps float64) LoadRow {
	maxBatch := uint64(64)
	if mode == LoadSerial {
		maxBatch = 1
	}
	return LoadRow{
		Provenance: Provenance{Version: "devel", Commit: "abc123", SourceFingerprint: "sha256:" + strings.Repeat("0f", 32),
			DeviceName: "NVIDIA H200", ComputeMajor: 9, DriverVersion: "580.159.04", Date: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)},
		Graph: "kron-22", Nodes: 4194304, Edges: 64155243, Backend: "gpu", Mode: mode, WindowNS: 200000, MaxBatch: maxBatch,
		Clients: clients, DurationNS: 10e9, Answered: 40 + uint64(qps*10), QPS: qps, P50NS: 1e6, P99NS: 3e6, P999NS: 5e6, MaxNS: 9e6,
		MeanBatch: float64(min(clients, maxBatch)), Checked: 40, Mismatches: 0,
	}
}

func TestLoadCSVRoundTrip(t *testing.T) {
	rows := []LoadRow{loadRow(LoadBatched, 256, 5000), loadRow(LoadSerial, 256, 200), loadRow(LoadBatched, 1, 130)}
	var buf bytes.Buffer
	require.NoError(t, WriteLoadCSV(&buf, rows))
	assert.True(t, IsLoadHeader(strings.SplitN(buf.String(), "\n", 2)[0]))
	got, err := ReadLoadCSV("load.csv", &buf)
	require.NoError(t, err)
	assert.Equal(t, rows, got)

	sp := LoadSpeedups(got)
	require.Len(t, sp, 1, "only 256 clients has both modes")
	assert.InDelta(t, 25.0, sp[0].Ratio, 1e-9)
	md := LoadMarkdown(got)
	assert.Contains(t, md, "| kron-22 | 256 | 200µs | 5000.0 | 200.0 | 25.00x | 3.000 |")
}

// TestLoadCSVRoundTripProperty writes random valid rows and reads them
// back unchanged.
func TestLoadCSVRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var rows []LoadRow
		for c := range 1 + rng.IntN(6) {
			r := loadRow([]string{LoadBatched, LoadSerial}[rng.IntN(2)], uint64(c+1), rng.Float64()*1e5)
			r.P50NS = 1 + rng.Uint64N(1e6)
			r.P99NS = r.P50NS + rng.Uint64N(1e6)
			r.P999NS = r.P99NS + rng.Uint64N(1e6)
			r.MaxNS = r.P999NS + rng.Uint64N(1e6)
			r.MeanBatch = rng.Float64() * float64(r.MaxBatch)
			r.Answered = rng.Uint64N(1e9) + r.Checked
			rows = append(rows, r)
		}
		var buf bytes.Buffer
		require.NoError(t, WriteLoadCSV(&buf, rows))
		got, err := ReadLoadCSV("p.csv", &buf)
		require.NoError(t, err)
		require.Equal(t, rows, got)
	}
}

// TestLoadCSVErrorsNameTheColumn rejects bad values at their column.
func TestLoadCSVErrorsNameTheColumn(t *testing.T) {
	for _, c := range []struct {
		change func(*LoadRow)
		field  string
	}{
		{func(r *LoadRow) { r.Mode = "fast" }, "mode"},
		{func(r *LoadRow) { r.Backend = "tpu" }, "backend"},
		{func(r *LoadRow) { r.Clients = 0 }, "clients"},
		{func(r *LoadRow) { r.MaxBatch = 0 }, "max_batch"},
		{func(r *LoadRow) { r.Mode = LoadSerial }, "max_batch"},
		{func(r *LoadRow) { r.DurationNS = 0 }, "duration_ns"},
		{func(r *LoadRow) { r.P99NS = 1 }, "p99_ns"},
		{func(r *LoadRow) { r.P50NS, r.P99NS, r.P999NS, r.MaxNS = 0, 0, 0, 0 }, "p50_ns"},
		{func(r *LoadRow) { r.MeanBatch = 65 }, "mean_batch"},
		{func(r *LoadRow) { r.Checked = r.Answered + 1 }, "checked"},
		{func(r *LoadRow) { r.Mismatches = r.Checked + 1 }, "mismatches"},
		{func(r *LoadRow) { r.Graph = "a graph" }, "graph"},
		{func(r *LoadRow) { r.Provenance.SourceFingerprint = "md5:x" }, "source_fingerprint"},
	} {
		r := loadRow(LoadBatched, 8, 100)
		c.change(&r)
		err := WriteLoadCSV(&bytes.Buffer{}, []LoadRow{r})
		var fe *FormatError
		require.ErrorAs(t, err, &fe, c.field)
		assert.Equal(t, c.field, fe.Field)
		assert.Equal(t, 2, fe.Line)
		assert.Contains(t, err.Error(), "Fix:")
	}
	r := loadRow(LoadBatched, 8, 100)
	err := WriteLoadCSV(&bytes.Buffer{}, []LoadRow{r, r})
	assert.ErrorContains(t, err, "repeats line 2")

	for _, text := range []string{"", "a,b\n", LoadCSVHeader + "\n1,2\n", LoadCSVHeader + "\n" + strings.Repeat("x,", 26) + "x\n"} {
		_, err := ReadLoadCSV("bad.csv", strings.NewReader(text))
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "%q", text)
		assert.Contains(t, err.Error(), "Fix:")
	}
	_, err = ReadSamples("load.csv", strings.NewReader(LoadCSVHeader+"\n"))
	assert.ErrorContains(t, err, "load evidence")
}

func FuzzReadLoadCSV(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteLoadCSV(&buf, []LoadRow{loadRow(LoadBatched, 4, 10), loadRow(LoadSerial, 4, 3)}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add(LoadCSVHeader + "\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		rows, err := ReadLoadCSV("f.csv", strings.NewReader(text))
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		var out bytes.Buffer
		require.NoError(t, WriteLoadCSV(&out, rows), "what reads writes")
		again, err := ReadLoadCSV("g.csv", &out)
		require.NoError(t, err)
		require.Equal(t, rows, again)
	})
}
