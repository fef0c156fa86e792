package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
)

const gateAbout = `Check the release claims in evidence/gates.json against the evidence CSVs
under evidence/results/ (gpuplan's evidence format, see package evidence).

A claim holds when its two arms come from one run (one file: one device,
one commit), the evidence is not stale (its source fingerprint is the
current fingerprint of a GPU workload: the workload package and every
package it imports, comments and layout aside), both arms agree on the result checksum,
no sample has timed uploads, allocations or extra host syncs, each arm has
at least 10 samples, and the lower bound of the 95% confidence interval of
the ratio of medians (benchmath) reaches the claimed speedup (and
1+min_effect, when the claim states a minimum effect). A claim against a
peer tool (gunrock, egg) must name the strongest peer measured on that
graph: a faster peer in the same file refuses it.

Each claim prints PASS (its whole 95% interval is on the claimed side of
the bound), FAIL (a check refused the evidence, or the whole interval is on
the wrong side) or UNKNOWN (the interval straddles the bound: the line says
about how many samples per arm would settle it). Any FAIL or UNKNOWN claim
exits 1 with what was observed and what was required. With no claims and
no results the gate passes and says that no evidence is recorded.

With --list-stale it prints only the names of the evidence files measured
on other code than this tree, one a line (the NAMEs scripts/record-all.sh
records), and exits 0. Run it after a change and before recording: a change
to a package that several workloads import stales the files of all of them.

vyre compatibility:
  --vyre FILE           validate vyre's megakernel speedup CSV (14 or 15
                        columns) and print vyre's summary line
  --vyre-session FILE   convert vyre's 17-column resident graph session CSV
                        through the session planner and print the validated
                        14-column speedup CSV
  --min-speedup X       required speedup for --vyre and --vyre-session
                        (default 100, as vyre's CLI); NaN, infinite, zero
                        and negative values are rejected
  --vyre-header         print vyre's 14-column speedup CSV header
FILE may be - for standard input.`

func runGate(e *env, args []string) error {
	f := e.newFlags("gate",
		"gate [--root DIR] [--gates FILE] [--results DIR] [--json]\n       gpuplan gate --list-stale [--root DIR] [--results DIR] [--json]\n       gpuplan gate --vyre FILE [--min-speedup X] [--json]\n       gpuplan gate --vyre-session FILE [--min-speedup X] [--json]\n       gpuplan gate --vyre-header",
		gateAbout)
	root := f.String("root", ".", "module root: the fingerprint of its measured code (the GPU workloads and the packages they import) decides staleness")
	gatesPath := f.String("gates", "", "gates file, - for standard input (default ROOT/evidence/gates.json)")
	resultsDir := f.String("results", "", "evidence directory (default ROOT/evidence/results)")
	vyreFile := f.String("vyre", "", "validate vyre's megakernel speedup CSV `FILE`")
	sessionFile := f.String("vyre-session", "", "convert vyre's resident graph session CSV `FILE`")
	minSpeedup := f.Float64("min-speedup", evidence.DefaultRequiredSpeedupX, "required speedup `X` for --vyre and --vyre-session")
	vyreHeader := f.Bool("vyre-header", false, "print vyre's megakernel speedup CSV header")
	listStale := f.Bool("list-stale", false, "print only the names of the evidence files measured on other code than this tree, one a line (the NAMEs scripts/record-all.sh records), and exit 0")
	f.readsInput()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	modes := 0
	for _, on := range []bool{*vyreFile != "", *sessionFile != "", *vyreHeader, *listStale} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return usagef("gpuplan gate: --vyre, --vyre-session, --vyre-header and --list-stale exclude each other. Fix: give at most one of them (see 'gpuplan gate --help')")
	}
	if setFlags(f)["min-speedup"] && *vyreFile == "" && *sessionFile == "" {
		return usagef("gpuplan gate: --min-speedup applies to --vyre and --vyre-session only; claims state their own speedups in gates.json. Fix: drop --min-speedup, or add --vyre FILE or --vyre-session FILE")
	}
	if math.IsNaN(*minSpeedup) || math.IsInf(*minSpeedup, 0) || *minSpeedup <= 0 {
		return usagef("gpuplan gate: --min-speedup %v is not a finite number above 0. Fix: give the required speedup, for example 100 (vyre's default)", *minSpeedup)
	}
	switch {
	case *vyreHeader:
		if f.json {
			return writeJSON(e.stdout, map[string]string{"header": evidence.MegakernelSpeedupCSVHeader})
		}
		_, err := fmt.Fprintln(e.stdout, evidence.MegakernelSpeedupCSVHeader)
		return err
	case *vyreFile != "":
		data, source, err := e.readInput(*vyreFile)
		if err != nil {
			return err
		}
		proof, err := evidence.ValidateSpeedupCSV(string(data), *minSpeedup)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if f.json {
			return writeJSON(e.stdout, proofJSON(proof))
		}
		_, err = fmt.Fprintln(e.stdout, proof.SummaryLine())
		return err
	case *sessionFile != "":
		data, source, err := e.readInput(*sessionFile)
		if err != nil {
			return err
		}
		proof, csv, err := evidence.ConvertSessionCSV(string(data), *minSpeedup)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if f.json {
			return writeJSON(e.stdout, map[string]any{"proof": proofJSON(proof), "csv": csv})
		}
		_, err = fmt.Fprint(e.stdout, csv)
		return err
	}
	if err := checkGateRoot(*root); err != nil {
		return err
	}
	if *listStale {
		return runListStale(e, f.json, *root, *resultsDir)
	}
	return runClaims(e, f.json, *root, *gatesPath, *resultsDir)
}

// checkGateRoot refuses a --root that is not a directory, naming it.
func checkGateRoot(root string) error {
	info, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--root %s: no such directory. Fix: %s", quote.Echo(root), gateRootFix)
	case err != nil:
		return fmt.Errorf("--root %s: %v. Fix: check the path and its permissions, or %s", quote.Echo(root), pathErrText(err), gateRootFix)
	case !info.IsDir():
		return fmt.Errorf("--root %s is not a directory. Fix: %s", quote.Echo(root), gateRootFix)
	}
	return nil
}

// gateRootFix says what --root must name.
const gateRootFix = "pass --root the module root (the directory holding go.mod, workloads/ and evidence/), or run from it and leave --root out"

// pathErrText is err without the path an *fs.PathError repeats, so that a
// message can name the path once, quoted.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// rootFingerprints returns the source fingerprints of root's GPU
// workloads; every error names root.
func rootFingerprints(root string) (evidence.Fingerprints, error) {
	info, err := os.Stat(filepath.Join(root, evidence.WorkloadsDir))
	if err != nil || !info.IsDir() {
		return nil, fmt.Errorf("--root %s has no %s directory, so its measured code cannot be fingerprinted. Fix: %s", quote.Echo(root), evidence.WorkloadsDir, gateRootFix)
	}
	fp, err := evidence.SourceFingerprints(root)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", quote.Echo(root), err)
	}
	return fp, nil
}

// runListStale prints the names of the evidence files whose source
// fingerprint is none of the tree's: what a change to the measured code
// (or to a package several workloads import) leaves to record again.
func runListStale(e *env, asJSON bool, root, resultsDir string) error {
	dir, err := resultsDirFor(root, resultsDir)
	if err != nil {
		return err
	}
	files, fp, err := loadEvidence(e, root, dir)
	if err != nil {
		return err
	}
	names := []string{}
	for _, p := range evidence.StaleFiles(files, fp) {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".csv"))
	}
	sort.Strings(names)
	if asJSON {
		return writeJSON(e.stdout, map[string][]string{"stale": names})
	}
	for _, n := range names {
		if _, err := fmt.Fprintln(e.stdout, n); err != nil {
			return err
		}
	}
	return nil
}

// loadEvidence reads the evidence files under dir and the current source
// fingerprints of root's GPU workloads.
func loadEvidence(e *env, root, dir string) ([]evidence.ResultFile, evidence.Fingerprints, error) {
	files, err := evidence.LoadResultsLimit(dir, e.inputLimit)
	if err != nil && dir == filepath.Join(root, "evidence", "results") {
		// The directory is the default under --root: name the root too.
		return nil, nil, fmt.Errorf("--root %s: %w", quote.Echo(root), err)
	}
	if err != nil {
		return nil, nil, err
	}
	fp, err := rootFingerprints(root)
	if err != nil {
		return nil, nil, err
	}
	return files, fp, addRunFingerprints(root, fp)
}

// resultsDirFor returns the evidence directory: resultsDir, which must
// exist, or ROOT/evidence/results when it is empty.
func resultsDirFor(root, resultsDir string) (string, error) {
	if resultsDir == "" {
		return filepath.Join(root, "evidence", "results"), nil
	}
	return resultsDir, existingDir("--results", resultsDir)
}

func proofJSON(p evidence.SpeedupProof) map[string]any {
	return map[string]any{"min_x": p.MinSpeedupX, "max_x": p.MaxSpeedupX, "samples": p.SampleCount, "repetitions": p.TotalRepetitions}
}

// verdictJSON is a verdict with infinite bounds written as null.
type verdictJSON struct {
	Name                string   `json:"name"`
	Claim               string   `json:"claim"`
	Pass                bool     `json:"pass"`
	Outcome             string   `json:"outcome"`
	Stale               bool     `json:"stale"`
	Reason              string   `json:"reason,omitempty"`
	File                string   `json:"file,omitempty"`
	Device              string   `json:"device,omitempty"`
	ComputeCapability   string   `json:"compute_capability,omitempty"`
	Commit              string   `json:"commit,omitempty"`
	BaselineSamples     int      `json:"baseline_samples"`
	CandidateSamples    int      `json:"candidate_samples"`
	SpeedupMedian       *float64 `json:"speedup_median,omitempty"`
	SpeedupLo           *float64 `json:"speedup_ci_lo,omitempty"`
	SpeedupHi           *float64 `json:"speedup_ci_hi,omitempty"`
	RequiredSpeedupLoGE float64  `json:"required_speedup_ci_lo_at_least"`
	SettleSamples       int      `json:"samples_per_arm_to_settle,omitempty"`
}

func finitePtr(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || (f == 0 && math.Signbit(f)) {
		return nil
	}
	return &f
}

// readGates reads and parses the claims: --gates FILE, standard input for
// "-", or ROOT/evidence/gates.json without the flag. It returns the name
// the output shows for them.
func readGates(e *env, root, gatesPath string) (evidence.Gates, string, error) {
	if gatesPath == "" {
		gatesPath = filepath.Join(root, "evidence", "gates.json")
		if _, err := os.Stat(gatesPath); errors.Is(err, fs.ErrNotExist) {
			return evidence.Gates{}, "", fmt.Errorf("--root %s has no evidence/gates.json. Fix: create %s with {\"claims\": []}, pass --gates FILE (- for standard input), or %s",
				quote.Echo(root), quote.Echo(gatesPath), gateRootFix)
		}
	} else if _, err := os.Stat(gatesPath); errors.Is(err, fs.ErrNotExist) && gatesPath != input.Stdin {
		return evidence.Gates{}, "", fmt.Errorf("--gates %s: no such file. Fix: check the path, create it with {\"claims\": []}, or pass --gates - to read the claims from standard input", quote.Echo(gatesPath))
	}
	data, source, err := e.readInput(gatesPath)
	if err != nil {
		return evidence.Gates{}, "", err
	}
	gates, err := evidence.ParseGates(source, data)
	return gates, source, err
}

func runClaims(e *env, asJSON bool, root, gatesPath, resultsDir string) error {
	resultsDir, err := resultsDirFor(root, resultsDir)
	if err != nil {
		return err
	}
	gates, gatesPath, err := readGates(e, root, gatesPath)
	if err != nil {
		return err
	}
	files, fp, err := loadEvidence(e, root, resultsDir)
	if err != nil {
		return err
	}
	r := claimsRun{gatesPath: gatesPath, resultsDir: resultsDir, fp: fp, files: files, claims: len(gates.Claims),
		verdicts: evidence.CheckClaims(gates, files, fp), stale: evidence.StaleFiles(files, fp)}
	for _, rf := range files {
		r.samples += len(rf.Samples)
	}
	r.tally = tallyVerdicts(r.verdicts)
	failed := r.tally[evidence.OutcomeFails] + r.tally[evidence.OutcomeUnknown]
	message := r.message(failed)
	if asJSON {
		err = r.writeJSON(e.stdout, failed == 0, message)
	} else {
		err = r.writeText(e.stdout, message)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return errors.New(message + ". Fix: see " + failedWhere(r.tally, asJSON) + "; each says what was observed and what was required")
	}
	return nil
}

// claimsRun is one judgement of the claims: the inputs the output names
// and the verdicts.
type claimsRun struct {
	gatesPath, resultsDir string
	fp                    evidence.Fingerprints
	files                 []evidence.ResultFile
	samples, claims       int
	verdicts              []evidence.Verdict
	stale                 []string
	tally                 map[evidence.Outcome]int
}

// message is the run's last line; failed counts the FAIL and UNKNOWN
// verdicts.
func (r *claimsRun) message(failed int) string {
	n, unknown := len(r.verdicts), r.tally[evidence.OutcomeUnknown]
	switch {
	case r.claims == 0 && r.samples == 0:
		return fmt.Sprintf("no evidence recorded: %s holds no samples and %s states no claims; nothing to check", quote.Text(r.resultsDir), quote.Text(r.gatesPath))
	case r.claims == 0:
		return fmt.Sprintf("no claims stated in %s; %d evidence files with %d samples are well-formed", quote.Text(r.gatesPath), len(r.files), r.samples)
	case failed == 0:
		return fmt.Sprintf("gate passed: %d of %d claims hold", n, n)
	case unknown == 0:
		return fmt.Sprintf("gate failed: %d of %d claims do not hold", failed, n)
	}
	return fmt.Sprintf("gate failed: %d of %d claims do not hold (%d FAIL, %d UNKNOWN: an unknown claim is not a held claim)",
		failed, n, r.tally[evidence.OutcomeFails], unknown)
}

// writeText prints a header line, one line per verdict, the stale files
// and message.
func (r *claimsRun) writeText(w io.Writer, message string) error {
	fmt.Fprintf(w, "gate: %d claims in %s; %d evidence files with %d samples in %s; source fingerprints %s\n",
		r.claims, quote.Text(r.gatesPath), len(r.files), r.samples, quote.Text(r.resultsDir), r.fp)
	for _, v := range r.verdicts {
		fmt.Fprintln(w, v.String())
	}
	for _, s := range r.stale {
		fmt.Fprintf(w, "note: %s is stale (measured on other code: its fingerprint differs)\n", quote.Text(s))
	}
	_, err := fmt.Fprintln(w, message)
	return err
}

// writeJSON writes the run as one JSON object.
func (r *claimsRun) writeJSON(w io.Writer, pass bool, message string) error {
	out := struct {
		Gates       string                `json:"gates"`
		Results     string                `json:"results"`
		Fingerprint evidence.Fingerprints `json:"source_fingerprints"`
		Files       int                   `json:"files"`
		Samples     int                   `json:"samples"`
		StaleFiles  []string              `json:"stale_files"`
		Claims      []verdictJSON         `json:"claims"`
		Pass        bool                  `json:"pass"`
		Message     string                `json:"message"`
	}{r.gatesPath, r.resultsDir, r.fp, len(r.files), r.samples, nonNil(r.stale), []verdictJSON{}, pass, message}
	for _, v := range r.verdicts {
		out.Claims = append(out.Claims, verdictJSON{
			Name: v.Claim.Name, Claim: v.Claim.String(), Pass: v.Holds(), Outcome: v.Outcome.String(), Stale: v.Stale, Reason: v.Reason,
			File: v.File, Device: v.Device, ComputeCapability: v.Compute, Commit: v.Commit,
			BaselineSamples: v.BaselineN, CandidateSamples: v.CandidateN,
			SpeedupMedian: finitePtr(v.Speedup.Center), SpeedupLo: finitePtr(v.Speedup.Lo), SpeedupHi: finitePtr(v.Speedup.Hi),
			RequiredSpeedupLoGE: v.RequiredSpeedupLower, SettleSamples: v.SettleSamples,
		})
	}
	return writeJSON(w, out)
}

// tallyVerdicts counts the verdicts of each outcome.
func tallyVerdicts(verdicts []evidence.Verdict) map[evidence.Outcome]int {
	tally := map[evidence.Outcome]int{}
	for _, v := range verdicts {
		tally[v.Outcome]++
	}
	return tally
}

// failedWhere points at the output that explains why the gate failed:
// the FAIL and UNKNOWN lines, or the claims of the JSON output that do
// not pass.
func failedWhere(tally map[evidence.Outcome]int, asJSON bool) string {
	fails, unknown := tally[evidence.OutcomeFails] > 0, tally[evidence.OutcomeUnknown] > 0
	switch {
	case asJSON && unknown:
		return `the claims with "pass": false, their "outcome" ("FAIL" or "UNKNOWN"), "reason" and "samples_per_arm_to_settle"`
	case asJSON:
		return `the claims with "pass": false and their "reason"`
	case fails && unknown:
		return "the FAIL and UNKNOWN lines above (an UNKNOWN line says how many samples per arm would settle it)"
	case unknown:
		return "the UNKNOWN lines above (each says how many samples per arm would settle it)"
	}
	return "the FAIL lines above"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
