package rebuild

import (
	"strings"
	"testing"
)

// FuzzEggArgsFromDump feeds arbitrary dump headers to EggArgsFromDump: it
// never panics, and what it accepts names the iterations, the scheduler
// and at least one start term, each --expr followed by its term.
func FuzzEggArgsFromDump(f *testing.F) {
	f.Add([]byte("egg-prerebuild-dump v1\n# egg 0.9.5, math rules (analysis-free port), SimpleScheduler, 7 iterations, the last one stopped before rebuild()\n# expr (i (ln x) x)\nops 1\n"))
	f.Add([]byte("egg-prerebuild-dump v1\n# BackoffScheduler, 3 iterations\n\n# expr a\n# expr (b c)\n"))
	f.Add([]byte("# expr\n"))
	f.Fuzz(func(t *testing.T, head []byte) {
		args, err := EggArgsFromDump(head)
		if err != nil {
			if !strings.Contains(err.Error(), "Fix:") {
				t.Fatalf("error without a Fix: %v", err)
			}
			return
		}
		if len(args) < 6 || args[0] != "--iters" || args[2] != "--scheduler" || (len(args)-4)%2 != 0 {
			t.Fatalf("malformed options %q", args)
		}
		for i := 4; i < len(args); i += 2 {
			if args[i] != "--expr" || args[i+1] == "" {
				t.Fatalf("option %d of %q is not --expr TERM", i, args)
			}
		}
	})
}

// FuzzPeerSummary feeds arbitrary peer output to parsePeerSummary: it
// never panics, and what it accepts has times that are not negative.
func FuzzPeerSummary(f *testing.F) {
	f.Add("SUMMARY name=peer reps=1 t1_rebuild_ms_median=0.5 t1_cold_ms=1.0 t2_unions_rebuild_ms_median=1.25\n")
	f.Add("noise\nSUMMARY reps=1 t2_unions_rebuild_ms_median=NaN\n")
	f.Add("SUMMARY reps=2\n")
	f.Add("SUMMARY reps=1 t1_rebuild_ms_median=NaN t1_cold_ms=+Inf t2_unions_rebuild_ms_median=1e400\n")
	f.Fuzz(func(t *testing.T, out string) {
		s, err := parsePeerSummary("egg-bench", out)
		if err != nil {
			if !strings.Contains(err.Error(), "Fix:") {
				t.Fatalf("error without a Fix: %v", err)
			}
			return
		}
		if !(s.T1Ns >= 0 && s.T2Ns >= 0 && s.T1ColdNs >= 0) {
			t.Fatalf("negative or NaN time from %q: %+v", out, s)
		}
	})
}
