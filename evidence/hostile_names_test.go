package evidence

import (
	"bytes"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gpuplan/gpuplan/internal/hostile"
)

// benchfmtConfigKeys are the file configuration keys WriteBenchfmt writes.
var benchfmtConfigKeys = []string{"run", "device", "compute-capability", "driver", "gpuplan-version", "commit", "source-fingerprint"}

// hostileSamples is a valid run of two arms, three samples each.
func hostileSamples() []Sample {
	var out []Sample
	for i := range uint64(3) {
		out = append(out, testSample("host-loop", i, 2e6+float64(i)*1e4), testSample("megakernel", i, 2e5+float64(i)*1e3))
	}
	return out
}

// renamed returns samples with every name (device, driver, commit,
// workload, arm) set to s; the arm keeps its own name as a suffix so the
// two arms stay apart.
func renamed(samples []Sample, s string) []Sample {
	out := append([]Sample(nil), samples...)
	for i := range out {
		p := &out[i].Provenance
		p.DeviceName, p.DriverVersion, p.Commit = s, s, s
		out[i].Workload.Name = s
		out[i].Arm = s + out[i].Arm
	}
	return out
}

// hostileFileOnDisk writes valid evidence under a file named name+".csv"
// in a fresh directory and loads it as the report does.
func hostileFileOnDisk(t *testing.T, name string) []ResultFile {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, WriteSamples(&buf, hostileSamples()))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".csv"), buf.Bytes(), 0o600))
	files, err := LoadResults(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Equal(t, name, RunLabels(files)[0])
	return files
}

// hostileCases are, for one hostile name, the evidence that carries it:
// a file of that name on disk (where a file name can hold it) and a run
// whose every name is hostile, built in memory.
func hostileCases(t *testing.T, s string, onDisk bool) map[string][]ResultFile {
	cases := map[string][]ResultFile{
		"all names": {{Path: "dir/" + s + ".csv", Samples: renamed(hostileSamples(), s)}},
	}
	if onDisk {
		cases["file name"] = hostileFileOnDisk(t, s)
	}
	return cases
}

// assertPrintableLines checks that out is valid UTF-8 whose only control
// character is the line feed that ends each line.
func assertPrintableLines(t *testing.T, out string) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "%q", out)
	for _, r := range out {
		if r != '\n' {
			require.True(t, unicode.IsGraphic(r), "%q holds %U", out, r)
		}
	}
}

// benchfmtRead reads out as benchstat does and returns its results,
// failing on anything else the reader reports.
func benchfmtRead(t *testing.T, out []byte) []*benchfmt.Result {
	t.Helper()
	r := benchfmt.NewReader(bytes.NewReader(out), "export.txt")
	var results []*benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		default:
			t.Fatalf("unexpected record %#v in\n%s", rec, out)
		}
	}
	require.NoError(t, r.Err())
	return results
}

// configValue decodes a file configuration value: a Go string literal
// when it starts with '"', the value itself otherwise.
func configValue(t *testing.T, v []byte) string {
	if !bytes.HasPrefix(v, []byte(`"`)) {
		return string(v)
	}
	s, err := strconv.Unquote(string(v))
	require.NoError(t, err, "%s", v)
	return s
}

// nameParts decodes a result's benchmark name into its workload and arm.
func nameParts(t *testing.T, n benchfmt.Name) (workload, arm string) {
	base, parts := n.Parts()
	require.Equal(t, BenchmarkName, string(base))
	require.Len(t, parts, 2, "%s", n)
	decode := func(part []byte, key string) string {
		v, ok := bytes.CutPrefix(part, []byte("/"+key+"="))
		require.True(t, ok, "%s", part)
		s, err := url.PathUnescape(string(v))
		require.NoError(t, err)
		return s
	}
	return decode(parts[0], "workload"), decode(parts[1], "arm")
}

// A hostile name cannot add a configuration key or a result to the
// benchmark export: benchfmt reads back exactly the real samples, with
// every name decoding to the original.
func TestBenchfmtHostileNames(t *testing.T) {
	for _, h := range hostile.Names() {
		for kind, files := range hostileCases(t, h.S, h.OnDisk) {
			t.Run(h.Label+"/"+kind, func(t *testing.T) {
				var buf bytes.Buffer
				require.NoError(t, WriteBenchfmt(&buf, files))
				assertPrintableLines(t, buf.String())
				assert.NotContains(t, buf.String(), "\nBenchmarkForged")
				results := benchfmtRead(t, buf.Bytes())
				samples := files[0].Samples
				require.Len(t, results, len(samples))
				for i, res := range results {
					s := samples[i]
					keys := map[string]string{}
					for _, c := range res.Config {
						keys[c.Key] = configValue(t, c.Value)
					}
					assert.ElementsMatch(t, benchfmtConfigKeys, mapKeys(keys))
					assert.Equal(t, RunLabels(files)[0], keys["run"])
					assert.Equal(t, s.Provenance.DeviceName, keys["device"])
					assert.Equal(t, s.Provenance.Commit, keys["commit"])
					workload, arm := nameParts(t, res.Name)
					assert.Equal(t, s.Workload.Name, workload)
					assert.Equal(t, s.Arm, arm)
					wall, ok := res.Value("sec/op")
					require.True(t, ok)
					assert.InDelta(t, s.WallNS, wall*1e9, 1e-6)
				}
			})
		}
	}
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBenchfmtNamePart(t *testing.T) {
	tests := []struct {
		in   string
		last bool
		want string
	}{
		{"grid-2048", false, "grid-2048"},
		{"kron-22", false, "kron-22"},
		{"exchange-p2", true, "exchange-p2"},
		{"egraph-gen-1000000-1-random", false, "egraph-gen-1000000-1-random"},
		{"a.b_c:d+e", true, "a.b_c:d+e"},
		{"megakernel-8", true, "megakernel%2D8"},
		{"megakernel-8", false, "megakernel-8"},
		{"trailing-", true, "trailing-"},
		{"-5", true, "%2D5"},
		{"a b/c=d%e", false, "a%20b%2Fc%3Dd%25e"},
		{"x\ny\x1b\x00\xff<", false, "x%0Ay%1B%00%FF%3C"},
		{"µ", false, "%C2%B5"},
		{"", true, ""},
	}
	for _, tc := range tests {
		got := benchfmtNamePart(tc.in, tc.last)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		back, err := url.PathUnescape(got)
		require.NoError(t, err)
		assert.Equal(t, tc.in, back)
	}
}

// An arm that ends in '-' and digits keeps its whole name: benchfmt does
// not read the suffix as GOMAXPROCS.
func TestBenchfmtArmWithDigitSuffix(t *testing.T) {
	s := testSample("megakernel-8", 0, 1e6)
	var buf bytes.Buffer
	require.NoError(t, WriteBenchfmt(&buf, []ResultFile{{Path: "run.csv", Samples: []Sample{s}}}))
	results := benchfmtRead(t, buf.Bytes())
	require.Len(t, results, 1)
	_, arm := nameParts(t, results[0].Name)
	assert.Equal(t, "megakernel-8", arm)
}

// hostileSummaries summarises the evidence of one hostile case.
func hostileSummaries(t *testing.T, files []ResultFile) []WorkloadSummary {
	t.Helper()
	s, err := Summarize(files, MetricWallNS, "host-loop")
	require.NoError(t, err)
	require.NotEmpty(t, s)
	return s
}

// The report CSV of hostile names reads back with one record per line,
// every record with the header's fields, and every name field decoding to
// the original name.
func TestReportCSVHostileNames(t *testing.T) {
	header := strings.Split(ReportCSVHeader, ",")
	for _, h := range hostile.Names() {
		for kind, files := range hostileCases(t, h.S, h.OnDisk) {
			t.Run(h.Label+"/"+kind, func(t *testing.T) {
				summaries := hostileSummaries(t, files)
				var buf bytes.Buffer
				require.NoError(t, WriteReportCSV(&buf, summaries))
				assertPrintableLines(t, buf.String())
				recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
				require.NoError(t, err)
				arms := 0
				for _, ws := range summaries {
					arms += len(ws.Arms)
				}
				require.Len(t, recs, 1+arms)
				assert.Equal(t, len(recs), strings.Count(buf.String(), "\n"), "one record per line")
				for _, rec := range recs {
					require.Len(t, rec, len(header))
				}
				ws, rec := summaries[0], recs[1]
				for col, want := range map[int]string{0: ws.Run, 1: ws.File, 2: ws.Workload.Name, 6: ws.Device, 9: ws.Commit, 12: ws.Arms[0].Arm} {
					assert.Equal(t, want, configValue(t, []byte(rec[col])), header[col])
				}
			})
		}
	}
}

// The Markdown report of hostile names keeps one table row per line and
// prints no control character.
func TestMarkdownHostileNames(t *testing.T) {
	for _, h := range hostile.Names() {
		for kind, files := range hostileCases(t, h.S, h.OnDisk) {
			t.Run(h.Label+"/"+kind, func(t *testing.T) {
				out := MarkdownTable(hostileSummaries(t, files))
				assertPrintableLines(t, out)
				rows := 0
				for _, line := range strings.Split(out, "\n") {
					if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| arm ") {
						rows++
						assert.Equal(t, 7, strings.Count(line, " | "), "%q", line)
					}
				}
				assert.Equal(t, 2, rows)
			})
		}
	}
}
