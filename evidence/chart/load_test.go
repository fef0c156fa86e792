package chart

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/hostile"
	"github.com/gpuplan/gpuplan/internal/quote"
)

func TestWriteLoad(t *testing.T) {
	rows := []evidence.LoadRow{loadRow(evidence.LoadBatched, 1, 100), loadRow(evidence.LoadBatched, 64, 3000), loadRow(evidence.LoadSerial, 64, 150)}
	rows[1].P50NS, rows[1].P99NS = 2e6, 8e6
	for _, format := range []string{SVG, PNG} {
		var buf bytes.Buffer
		require.NoError(t, WriteLoad(&buf, rows, format))
		assert.Greater(t, buf.Len(), 1000, format)
	}
	var svg bytes.Buffer
	require.NoError(t, WriteLoad(&svg, rows, SVG))
	assert.Contains(t, svg.String(), "kron-22 gpu batched window 200µs")
	assert.Error(t, WriteLoad(&bytes.Buffer{}, nil, SVG))
	assert.Error(t, WriteLoad(&bytes.Buffer{}, rows, "gif"))
}

// The load chart of hostile graph, backend and mode names is well-formed
// XML with printable text.
func TestWriteLoadHostileNames(t *testing.T) {
	for _, h := range hostile.Names() {
		t.Run(h.Label, func(t *testing.T) {
			rows := []evidence.LoadRow{loadRow(evidence.LoadBatched, 1, 100), loadRow(evidence.LoadBatched, 64, 3000), loadRow(evidence.LoadSerial, 64, 150)}
			for i := range rows {
				rows[i].Graph, rows[i].Backend, rows[i].Provenance.DeviceName = h.S, h.S, h.S
				rows[i].Mode = h.S + rows[i].Mode
			}
			var svg bytes.Buffer
			require.NoError(t, WriteLoad(&svg, rows, SVG))
			texts := svgText(t, svg.Bytes())
			assertPrintableTexts(t, texts)
			assert.Contains(t, strings.Join(texts, "\n"), quote.Text(h.S+evidence.LoadSerial))
		})
	}
}
