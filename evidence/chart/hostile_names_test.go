package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/hostile"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// svgText parses data as XML, failing on any error, and returns the
// character data of its text elements.
func svgText(t *testing.T, data []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the SVG is not well-formed XML")
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		}
	}
	require.NotEmpty(t, texts)
	return texts
}

// assertPrintableTexts checks that every text is printable: valid UTF-8
// of graphic characters and spaces.
func assertPrintableTexts(t *testing.T, texts []string) {
	t.Helper()
	for _, s := range texts {
		require.True(t, utf8.ValidString(s), "%q", s)
		for _, r := range s {
			require.True(t, unicode.IsGraphic(r), "%q holds %U", s, r)
		}
	}
}

// The chart of hostile names is well-formed XML as SVG, its text is
// printable, a name shows quoted where it is not plain text, and the PNG
// draws.
func TestWriteEvidenceHostileNames(t *testing.T) {
	for _, h := range hostile.Names() {
		for kind, files := range hostileCases(t, h.S, h.OnDisk) {
			t.Run(h.Label+"/"+kind, func(t *testing.T) {
				summaries := hostileSummaries(t, files)
				var svg bytes.Buffer
				require.NoError(t, WriteEvidence(&svg, summaries, SVG))
				texts := svgText(t, svg.Bytes())
				assertPrintableTexts(t, texts)
				all := strings.Join(texts, "\n")
				assert.Contains(t, all, quote.Text(summaries[0].Arms[0].Arm))
				if kind == "file name" {
					// Where every name is hostile, the heading is too long
					// for the panel and the plot leaves it out.
					assert.Contains(t, all, "run "+quote.Text(evidence.RunLabels(files)[0]))
				}
				var img bytes.Buffer
				require.NoError(t, WriteEvidence(&img, summaries, PNG))
				_, err := png.Decode(&img)
				require.NoError(t, err)
			})
		}
	}
}
