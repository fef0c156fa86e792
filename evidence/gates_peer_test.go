package evidence

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peerFile is a one-run file of grid-512 with 12 samples of each arm in
// arms (name: ns), times spread by up to 4% in a fixed pattern.
func peerFile(path string, arms map[string]float64) ResultFile {
	f := ResultFile{Path: path}
	names := make([]string, 0, len(arms))
	for name := range arms {
		names = append(names, name)
	}
	slices.Sort(names)
	for i := range uint64(12) {
		for _, arm := range names {
			s := testSample(arm, i, arms[arm]*(1+0.01*float64(i%5)))
			s.Workload.Name = "grid-512"
			f.Samples = append(f.Samples, s)
		}
	}
	return f
}

// peerClaim is "megakernel at least 2x baseline" on grid-512.
func peerClaim(baseline string) Claim {
	return Claim{Name: "megakernel vs " + baseline, Workload: "grid-512", Baseline: baseline, Candidate: "megakernel", Metric: MetricWallNS, MinSpeedup: 2}
}

// A claim against a peer tool must name the strongest peer measured on
// the graph: a faster peer in the same file refuses it.
func TestCheckClaimsStrongestPeer(t *testing.T) {
	twoPeers := map[string]float64{"gunrock": 5e6, "egg": 3e6, "megakernel": 1e6, "host-loop": 2e6}
	tests := []struct {
		name   string
		claim  func() Claim
		files  func() []ResultFile
		reason string // "" when the claim holds
	}{
		{"against the weaker peer", func() Claim { return peerClaim("gunrock") },
			func() []ResultFile { return []ResultFile{peerFile("run.csv", twoPeers)} },
			`weaker peer: baseline gunrock takes a median 5.075 ms (wall_ns) on workload grid-512 in run.csv, but peer egg measured in the same run takes 3.045 ms; required a claim against a peer to name the strongest peer measured on that graph. Fix: claim against egg ("baseline": "egg")`},
		{"against the strongest peer", func() Claim { return peerClaim("egg") },
			func() []ResultFile { return []ResultFile{peerFile("run.csv", twoPeers)} }, ""},
		{"one peer", func() Claim { return peerClaim("gunrock") },
			func() []ResultFile {
				return []ResultFile{peerFile("run.csv", map[string]float64{"gunrock": 5e6, "megakernel": 1e6})}
			}, ""},
		{"a tie is not stronger", func() Claim { return peerClaim("gunrock") },
			func() []ResultFile {
				return []ResultFile{peerFile("run.csv", map[string]float64{"gunrock": 3e6, "egg": 3e6, "megakernel": 1e6})}
			}, ""},
		{"own arms are not peers", func() Claim { return peerClaim("gunrock") },
			func() []ResultFile {
				return []ResultFile{peerFile("run.csv", map[string]float64{"gunrock": 3e6, "device-loop": 1.5e6, "megakernel": 1e6})}
			}, ""},
		{"a faster peer in another file", func() Claim { c := peerClaim("gunrock"); c.File = "run.csv"; return c },
			func() []ResultFile {
				return []ResultFile{peerFile("run.csv", map[string]float64{"gunrock": 5e6, "megakernel": 1e6}), peerFile("other.csv", map[string]float64{"egg": 1e6})}
			}, ""},
		{"on device_ns", func() Claim { c := peerClaim("gunrock"); c.Metric = MetricDeviceNS; return c },
			func() []ResultFile { return []ResultFile{peerFile("run.csv", twoPeers)} },
			"weaker peer: baseline gunrock takes a median 4.567 ms (device_ns)"},
		{"a peer without device_ns is compared on wall_ns", func() Claim { c := peerClaim("gunrock"); c.Metric = MetricDeviceNS; return c },
			func() []ResultFile {
				f := peerFile("run.csv", twoPeers)
				for i := range f.Samples {
					if f.Samples[i].Arm == "egg" {
						f.Samples[i].DeviceNS = 0
					}
				}
				return []ResultFile{f}
			},
			"weaker peer: baseline gunrock takes a median 5.075 ms (wall_ns)"},
		{"a per-iteration claim has no peer", func() Claim {
			return Claim{Name: "per level", Workload: "grid-512", Candidate: "megakernel", Metric: MetricWallNS, MaxNSPerIteration: 1e5}
		}, func() []ResultFile { return []ResultFile{peerFile("run.csv", twoPeers)} }, ""},
		{"host-loop is not a peer", func() Claim { return peerClaim("host-loop") },
			func() []ResultFile {
				return []ResultFile{peerFile("run.csv", map[string]float64{"host-loop": 5e6, "egg": 1.5e6, "megakernel": 1e6})}
			}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := CheckClaims(Gates{Claims: []Claim{tc.claim()}}, tc.files(), testFingerprints)[0]
			if tc.reason == "" {
				require.True(t, v.Holds(), v.String())
				return
			}
			require.Equal(t, OutcomeFails, v.Outcome, v.String())
			assert.Contains(t, v.Reason, tc.reason)
			assert.Contains(t, v.Reason, "Fix: claim against egg")
		})
	}
}
