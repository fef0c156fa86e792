package evidence

import (
	"encoding/json"
	"fmt"
	"github.com/gpuplan/gpuplan/internal/stats"
	"io/fs"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/strictjson"
)

// Metrics a claim can be judged on.
const (
	MetricWallNS   = "wall_ns"
	MetricDeviceNS = "device_ns"
)

// Claim is one release claim, of one of two kinds. A speedup claim: on
// Workload, Candidate is at least MinSpeedup times faster than Baseline on
// Metric (speedup = baseline time / candidate time), at the lower bound of
// the 95% confidence interval. A per-iteration claim (MaxNSPerIteration
// set, no Baseline): on Workload, Candidate's Metric divided by the
// workload's iterations is at most MaxNSPerIteration ns, at the upper
// bound of the 95% confidence interval of its median.
//
// MinSpeedup is at least 1: a speedup claim says the candidate is faster.
// A claim that only bounds a slowdown sets NoRegression, and then
// MinSpeedup lies in (0, 1] and means that the candidate is at most
// 1/MinSpeedup times slower than the baseline (0.95: at most about 5%
// slower), judged at the same lower bound. ParseGates refuses a MinSpeedup
// below 1 without NoRegression, and NoRegression with a MinSpeedup above 1
// or on a per-iteration claim.
type Claim struct {
	Name       string  `json:"name"`
	Workload   string  `json:"workload"`
	Baseline   string  `json:"baseline,omitempty"`
	Candidate  string  `json:"candidate"`
	Metric     string  `json:"metric"`
	MinSpeedup float64 `json:"min_speedup,omitempty"`
	// NoRegression makes a speedup claim a no-regression bound: MinSpeedup
	// in (0, 1] bounds how much slower the candidate may be.
	NoRegression bool `json:"no_regression,omitempty"`
	// MinEffect optionally states the smallest effect that matters on a
	// speedup claim: the candidate must be faster than the baseline by at
	// least this fraction beyond noise, so the lower bound of the speedup's
	// interval must reach 1+MinEffect as well as MinSpeedup (0.05: at least
	// 1.05x). It lies in (0, 1) and must ask for more than MinSpeedup does;
	// see RequiredSpeedup.
	MinEffect float64 `json:"min_effect,omitempty"`
	// MaxNSPerIteration makes the claim a per-iteration claim: the most ns
	// one iteration (a BFS level, a wave) may take.
	MaxNSPerIteration float64 `json:"max_ns_per_iteration,omitempty"`
	// File optionally picks one results file, relative to the results
	// directory, when several hold the workload.
	File string `json:"file,omitempty"`
	// Device optionally requires the evidence to come from this device.
	Device string `json:"device,omitempty"`
}

// PerIteration reports whether c is a per-iteration claim.
func (c Claim) PerIteration() bool { return c.MaxNSPerIteration > 0 }

// RequiredSpeedup is the bound a speedup claim's interval is judged
// against: MinSpeedup, or 1+MinEffect when the claim states a larger
// minimum effect. It is 0 for a per-iteration claim.
func (c Claim) RequiredSpeedup() float64 {
	switch {
	case c.PerIteration():
		return 0
	case c.MinEffect > 0:
		return max(c.MinSpeedup, 1+c.MinEffect)
	}
	return c.MinSpeedup
}

// String describes the claim in one line.
func (c Claim) String() string {
	if c.PerIteration() {
		return fmt.Sprintf("%s on %s (%s) at most %s per iteration", c.Candidate, c.Workload, c.Metric, stats.FormatNs(c.MaxNSPerIteration))
	}
	s := fmt.Sprintf("%s vs %s on %s (%s) at least %sx", c.Candidate, c.Baseline, c.Workload, c.Metric, formatFloat(c.MinSpeedup))
	if c.NoRegression {
		s += fmt.Sprintf(" (no regression: at most %sx slower)", strconv.FormatFloat(1/c.MinSpeedup, 'g', 3, 64))
	}
	if c.MinEffect > 0 {
		s += fmt.Sprintf(" (min effect %s: at least %sx beyond noise)", formatFloat(c.MinEffect), formatBound(1+c.MinEffect))
	}
	return s
}

// Gates is the content of evidence/gates.json.
type Gates struct {
	Claims []Claim `json:"claims"`
}

type rawClaim struct {
	Name         *string  `json:"name"`
	Workload     *string  `json:"workload"`
	Baseline     *string  `json:"baseline"`
	Candidate    *string  `json:"candidate"`
	Metric       *string  `json:"metric"`
	MinSpeedup   *float64 `json:"min_speedup"`
	MaxNSIter    *float64 `json:"max_ns_per_iteration"`
	MinEffect    *float64 `json:"min_effect"`
	NoRegression bool     `json:"no_regression"`
	File         string   `json:"file"`
	Device       string   `json:"device"`
}

// ParseGates decodes a gates file strictly: unknown fields, a missing
// "claims" list or claim field, an unknown metric, a min_speedup or
// max_ns_per_iteration that is not a finite number above 0, a per-iteration
// claim with a baseline or a min_speedup, a claim comparing an arm with
// itself, a repeated claim name, a min_speedup below 1 on a claim without
// "no_regression": true, "no_regression": true with a min_speedup above 1
// or on a per-iteration claim, and a min_effect outside (0, 1), on a
// per-iteration or no-regression claim, or asking for no more than
// min_speedup already does, are *strictjson.Error values naming the field
// (and the claim, where the name is known).
func ParseGates(source string, data []byte) (Gates, error) {
	var raw struct {
		Claims *[]rawClaim `json:"claims"`
	}
	if err := strictjson.Decode(source, data, &raw); err != nil {
		return Gates{}, err
	}
	if raw.Claims == nil {
		return Gates{}, strictjson.Required(source, "claims", `add "claims": [] (a list of claims, empty until evidence exists)`)
	}
	g := Gates{Claims: make([]Claim, 0, len(*raw.Claims))}
	names := map[string]int{}
	for i, rc := range *raw.Claims {
		at := claimAt{source: source, index: i}
		c, err := at.decode(rc)
		if err == nil {
			err = at.check(c, names)
		}
		if err == nil {
			err = checkSpeedupBound(c, at.bad)
		}
		if err == nil {
			err = checkMinEffect(c, rc.MinEffect != nil, at.bad)
		}
		if err != nil {
			return Gates{}, err
		}
		names[c.Name] = i + 1
		g.Claims = append(g.Claims, c)
	}
	return g, nil
}

// claimAt names claims[index] of a gates file in errors.
type claimAt struct {
	source string
	index  int
}

// field is the path of one of the claim's fields.
func (at claimAt) field(name string) string { return fmt.Sprintf("claims[%d].%s", at.index, name) }

// bad is the error for a field of the claim.
func (at claimAt) bad(name, msg, fix string) error {
	return &strictjson.Error{Source: at.source, Field: at.field(name), Msg: msg, Fix: fix}
}

// decode requires the claim's fields and picks its kind: a speedup claim
// (baseline, min_speedup) or a per-iteration claim (max_ns_per_iteration).
func (at claimAt) decode(rc rawClaim) (Claim, error) {
	perIter := rc.MaxNSIter != nil
	for _, req := range []struct {
		name string
		v    *string
	}{{"name", rc.Name}, {"workload", rc.Workload}, {"baseline", rc.Baseline}, {"candidate", rc.Candidate}, {"metric", rc.Metric}} {
		if req.v == nil && !(perIter && req.name == "baseline") {
			return Claim{}, strictjson.Required(at.source, at.field(req.name), "state the claim's "+req.name)
		}
	}
	c := Claim{Name: *rc.Name, Workload: *rc.Workload, Candidate: *rc.Candidate, Metric: *rc.Metric, NoRegression: rc.NoRegression, File: rc.File, Device: rc.Device}
	if rc.MinEffect != nil {
		c.MinEffect = *rc.MinEffect
	}
	switch {
	case perIter && rc.Baseline != nil:
		return Claim{}, at.bad("baseline", "a per-iteration claim (max_ns_per_iteration) judges one arm and has no baseline", "drop baseline, or drop max_ns_per_iteration and state min_speedup")
	case perIter && rc.MinSpeedup != nil:
		return Claim{}, at.bad("min_speedup", "a claim states either min_speedup or max_ns_per_iteration, not both", "drop one of them")
	case perIter:
		c.MaxNSPerIteration = *rc.MaxNSIter
		if !checked.Finite(c.MaxNSPerIteration) || c.MaxNSPerIteration <= 0 {
			return Claim{}, at.bad("max_ns_per_iteration", fmt.Sprintf("max_ns_per_iteration %v is not a finite number above 0", c.MaxNSPerIteration), "state the most ns one iteration may take, for example 2000")
		}
	case rc.MinSpeedup == nil:
		return Claim{}, strictjson.Required(at.source, at.field("min_speedup"), "state the required speedup, for example 5, or max_ns_per_iteration for a per-iteration claim without baseline")
	default:
		c.Baseline, c.MinSpeedup = *rc.Baseline, *rc.MinSpeedup
	}
	return c, nil
}

// check validates the claim's names, arms, metric, speedup and file;
// names maps the names of the claims before it to their index + 1.
func (at claimAt) check(c Claim, names map[string]int) error {
	perIter := c.PerIteration()
	switch {
	case strings.TrimSpace(c.Name) == "":
		return at.bad("name", "name is empty", "give the claim a short name")
	case names[c.Name] > 0:
		return at.bad("name", fmt.Sprintf("name %s repeats claims[%d]", quote.Echo(c.Name), names[c.Name]-1), "give every claim its own name")
	case !isToken(c.Workload):
		return at.bad("workload", fmt.Sprintf("workload %s is not a token", quote.Echo(c.Workload)), "use the workload name of the evidence rows, for example grid-2048")
	case !perIter && !isArm(c.Baseline):
		return at.bad("baseline", fmt.Sprintf("arm %s is not [a-z0-9-]+", quote.Echo(c.Baseline)), "use an arm name of the evidence rows, for example host-loop")
	case !isArm(c.Candidate):
		return at.bad("candidate", fmt.Sprintf("arm %s is not [a-z0-9-]+", quote.Echo(c.Candidate)), "use an arm name of the evidence rows, for example megakernel")
	case c.Baseline == c.Candidate:
		return at.bad("candidate", "candidate and baseline are the same arm", "compare two different arms")
	case c.Metric != MetricWallNS && c.Metric != MetricDeviceNS:
		return at.bad("metric", fmt.Sprintf("metric %s is unknown", quote.Echo(c.Metric)), `use "wall_ns" or "device_ns"`)
	case !perIter && (!checked.Finite(c.MinSpeedup) || c.MinSpeedup <= 0):
		return at.bad("min_speedup", fmt.Sprintf("min_speedup %v is not a finite number above 0", c.MinSpeedup), "state the required speedup as a positive number, for example 5")
	case c.File != "" && (!fs.ValidPath(c.File) || !strings.HasSuffix(c.File, ".csv")):
		return at.bad("file", fmt.Sprintf("file %s is not a relative .csv path inside the results directory", quote.Echo(c.File)), "name a file under evidence/results/ with forward slashes, for example h200/2026-11-22.csv")
	}
	return nil
}

// checkSpeedupBound refuses a claim whose min_speedup would let a slower
// candidate pass unannounced: a min_speedup below 1 without no_regression,
// and no_regression on a claim that is not a bound on a slowdown. bad
// builds the error for a field of the claim.
func checkSpeedupBound(c Claim, bad func(name, msg, fix string) error) error {
	switch {
	case c.NoRegression && c.PerIteration():
		return bad("no_regression", fmt.Sprintf("claim %s is a per-iteration claim, which has no baseline to bound a regression against", quote.Echo(c.Name)),
			"drop no_regression, or state baseline and min_speedup instead of max_ns_per_iteration")
	case c.PerIteration():
		return nil
	case c.NoRegression && c.MinSpeedup > 1:
		return bad("min_speedup", fmt.Sprintf("claim %s sets no_regression, but its min_speedup %v is above 1, which claims a speedup rather than bounding a slowdown", quote.Echo(c.Name), c.MinSpeedup),
			"drop no_regression to claim the speedup, or state min_speedup in (0, 1], for example 0.95 for at most about 5% slower")
	case !c.NoRegression && c.MinSpeedup < 1:
		return bad("min_speedup", fmt.Sprintf("claim %s has min_speedup %v, below 1, so it would hold with %s slower than %s", quote.Echo(c.Name), c.MinSpeedup, c.Candidate, c.Baseline),
			`state min_speedup 1 or more, or add "no_regression": true to the claim to allow the candidate to be at most 1/min_speedup times slower`)
	}
	return nil
}

// MarshalGates renders gates as indented JSON, the committed form.
func MarshalGates(g Gates) ([]byte, error) {
	if g.Claims == nil {
		g.Claims = []Claim{}
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Verdict is the judgement of one claim.
type Verdict struct {
	Claim Claim
	// Outcome is OutcomeHolds, OutcomeFails (the zero value: a claim that
	// a step refused fails) or OutcomeUnknown.
	Outcome Outcome
	// Stale is set when the evidence was measured on other kernels or
	// another executor than the current tree's.
	Stale bool
	// Reason says, for a claim that does not hold, what was observed and
	// what was required, ending with a "Fix:" sentence.
	Reason string
	// SettleSamples is, for an unknown claim, about how many samples per
	// arm would settle it (SamplesToSettle); 0 otherwise, and when that
	// estimate is above MaxSettleSamples.
	SettleSamples int
	// The evidence used, when the claim got as far as choosing it.
	File            string
	Device          string
	Compute         string
	Commit          string
	BaselineN       int
	CandidateN      int
	BaselineMedian  Interval // ns, per-arm 95% interval
	CandidateMedian Interval // ns, per-arm 95% interval
	Speedup         Interval // baseline/candidate, 95% interval
	// RequiredSpeedupLower is the claim's RequiredSpeedup: the bound the
	// speedup's interval is judged against.
	RequiredSpeedupLower float64
	// For a per-iteration claim: the workload's iterations and the
	// candidate's median ns per iteration with its 95% interval.
	Iterations   uint64
	PerIteration Interval
}

// Holds reports whether the claim holds: Outcome is OutcomeHolds.
func (v Verdict) Holds() bool { return v.Outcome == OutcomeHolds }

// String renders the verdict as one line starting with PASS, FAIL or
// UNKNOWN (Outcome.String).
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", v.Outcome, quote.Text(v.Claim.Name), v.Claim)
	device, commit, file := quote.Text(v.Device), quote.Text(v.Commit), quote.Text(v.File)
	switch {
	case v.Holds() && v.Claim.PerIteration():
		fmt.Fprintf(&b, ": observed %s per iteration, 95%% CI [%s, %s], n=%d, %d iterations, %s (%s), commit %s, %s",
			stats.FormatNs(v.PerIteration.Center), stats.FormatNs(v.PerIteration.Lo), stats.FormatNs(v.PerIteration.Hi), v.CandidateN, v.Iterations, device, v.Compute, commit, file)
	case v.Holds():
		fmt.Fprintf(&b, ": observed %s, 95%% CI [%s, %s], n=%d+%d, %s (%s), commit %s, %s",
			fmtX(v.Speedup.Center), fmtX(v.Speedup.Lo), fmtX(v.Speedup.Hi), v.BaselineN, v.CandidateN, device, v.Compute, commit, file)
	default:
		b.WriteString(": ")
		b.WriteString(v.Reason)
	}
	return b.String()
}

func fmtX(x float64) string { return fmt.Sprintf("%.2fx", x) }

// CheckClaims judges every claim against files. current holds the
// fingerprints of the current tree's workloads (SourceFingerprints):
// evidence whose fingerprint is none of them is stale. The steps and their
// order are in the package documentation; CheckClaims is a pure function.
func CheckClaims(g Gates, files []ResultFile, current Fingerprints) []Verdict {
	out := make([]Verdict, 0, len(g.Claims))
	for _, c := range g.Claims {
		out = append(out, checkClaim(c, files, current))
	}
	return out
}

func checkClaim(c Claim, files []ResultFile, current Fingerprints) Verdict {
	k := &claimCheck{c: c, v: Verdict{Claim: c, RequiredSpeedupLower: c.RequiredSpeedup()}}
	steps := []func() string{
		func() string { return k.chooseFile(files) }, // 1 and 2
		k.armsRecorded,
		k.oneBuild,
		func() string { return k.fresh(current) }, // 3
		k.checksumsAgree, // 4
		k.unpolluted,     // 5
		k.enoughSamples,  // 6
		k.strongestPeer,  // 7
	}
	for _, step := range steps {
		if reason := step(); reason != "" {
			k.v.Reason = reason
			return k.v
		}
	}
	return k.judge() // 8
}

// claimCheck carries one claim through the steps of checkClaim. Each step
// returns "" to go on, or the reason the claim fails.
type claimCheck struct {
	c        Claim
	v        Verdict
	f        candidateFile
	firstRow *Sample // the first sample of the compared arms
}

// candidateFile is one results file's samples of a claim's two arms, and
// of the other peer arms (IsExternalArm) on the claim's workload.
type candidateFile struct {
	path       string
	base, cand []*Sample
	peers      map[string][]*Sample
}

// evidenceIn collects, per file, the samples of c's arms on its workload
// (and device, when the claim names one), and those of the other peer arms
// beside them.
func evidenceIn(c Claim, files []ResultFile) []candidateFile {
	var found []candidateFile
	for _, f := range files {
		if c.File != "" && f.Path != c.File {
			continue
		}
		cf := candidateFile{path: f.Path}
		for i := range f.Samples {
			s := &f.Samples[i]
			if s.Workload.Name != c.Workload || (c.Device != "" && s.Provenance.DeviceName != c.Device) {
				continue
			}
			switch {
			case s.Arm == c.Candidate:
				cf.cand = append(cf.cand, s)
			case s.Arm == c.Baseline && !c.PerIteration():
				cf.base = append(cf.base, s)
			case IsExternalArm(s.Arm):
				if cf.peers == nil {
					cf.peers = map[string][]*Sample{}
				}
				cf.peers[s.Arm] = append(cf.peers[s.Arm], s)
			}
		}
		if len(cf.base) > 0 || len(cf.cand) > 0 {
			found = append(found, cf)
		}
	}
	return found
}

// chooseFile requires evidence (step 1) from exactly one file (step 2).
func (k *claimCheck) chooseFile(files []ResultFile) string {
	c := k.c
	found := evidenceIn(c, files)
	where := "evidence/results/"
	if c.File != "" {
		where = quote.Text(c.File)
	}
	if c.Device != "" {
		where += " on device " + quote.Text(c.Device)
	}
	switch {
	case len(found) == 0 && c.PerIteration():
		return fmt.Sprintf("no evidence recorded: no %s samples of workload %s in %s; required at least %d. Fix: run the benchmark and commit its CSV under evidence/results/",
			c.Candidate, c.Workload, where, MinSamplesPerArm)
	case len(found) == 0:
		return fmt.Sprintf("no evidence recorded: no %s or %s samples of workload %s in %s; required at least %d samples of each. Fix: run the benchmark and commit its CSV under evidence/results/",
			c.Baseline, c.Candidate, c.Workload, where, MinSamplesPerArm)
	case len(found) > 1:
		names := make([]string, len(found))
		for i, f := range found {
			names[i] = quote.Text(f.path)
		}
		return fmt.Sprintf("evidence for workload %s is spread over %d files (%s); required the compared arms from one run. Fix: set \"file\" on the claim or remove the outdated files",
			c.Workload, len(found), strings.Join(names, ", "))
	}
	k.f = found[0]
	k.v.File = k.f.path
	return ""
}

// armsRecorded requires samples of both arms (of the candidate alone for a
// per-iteration claim).
func (k *claimCheck) armsRecorded() string {
	c, f := k.c, k.f
	for _, arm := range []struct {
		name string
		rows []*Sample
	}{{c.Baseline, f.base}, {c.Candidate, f.cand}} {
		if len(arm.rows) == 0 && !(c.PerIteration() && arm.name == c.Baseline) {
			return fmt.Sprintf("no evidence recorded for arm %s: %s has %d %s samples of workload %s and none of %s; required at least %d samples of each. Fix: measure both arms in the same run",
				arm.name, quote.Text(f.path), len(f.base)+len(f.cand), otherArm(c, arm.name), c.Workload, arm.name, MinSamplesPerArm)
		}
	}
	k.firstRow = f.cand[0]
	if len(f.base) > 0 {
		k.firstRow = f.base[0]
	}
	return ""
}

// oneBuild requires one device, driver, commit and fingerprint across the
// compared samples (the rest of step 2).
func (k *claimCheck) oneBuild() string {
	first := k.firstRow.Provenance
	k.v.Device, k.v.Commit = first.DeviceName, first.Commit
	k.v.Compute = computeString(first.ComputeMajor, first.ComputeMinor)
	for _, s := range bothArms(k.f.base, k.f.cand) {
		p := s.Provenance
		if p.DeviceName != first.DeviceName || p.ComputeMajor != first.ComputeMajor || p.ComputeMinor != first.ComputeMinor ||
			p.DriverVersion != first.DriverVersion || p.Commit != first.Commit || p.SourceFingerprint != first.SourceFingerprint {
			return fmt.Sprintf("mixed devices or builds in one comparison: %s sample %d ran on %s (%s), commit %s, but %s sample %d on %s (%s), commit %s; required one device and one commit. Fix: compare arms measured in one run",
				k.firstRow.Arm, k.firstRow.Index, quote.Text(first.DeviceName), k.v.Compute, quote.Text(first.Commit),
				s.Arm, s.Index, quote.Text(p.DeviceName), computeString(p.ComputeMajor, p.ComputeMinor), quote.Text(p.Commit))
		}
	}
	return ""
}

// fresh requires evidence measured on the current measured code.
func (k *claimCheck) fresh(current Fingerprints) string {
	measured := k.firstRow.Provenance.SourceFingerprint
	if current.Contains(measured) {
		return ""
	}
	k.v.Stale = true
	return fmt.Sprintf("stale evidence: %s was measured on code with source fingerprint %s, but the current tree's workloads have %s; required evidence of the current measured code (a GPU workload and the packages it imports). Fix: re-run the benchmark on this tree and replace the file",
		quote.Text(k.f.path), measured, current)
}

// checksumsAgree requires one result checksum across both arms.
func (k *claimCheck) checksumsAgree() string {
	ref := k.firstRow
	for _, s := range bothArms(k.f.base, k.f.cand) {
		if s.Checksum != ref.Checksum {
			return fmt.Sprintf("checksum mismatch: %s sample %d has %s but %s sample %d has %s; required equal results from every sample of both arms. Fix: find why the arms compute different results before timing them",
				s.Arm, s.Index, s.Checksum, ref.Arm, ref.Index, ref.Checksum)
		}
	}
	return ""
}

// unpolluted requires no uploads, allocations or extra syncs in the timed
// region of any sample.
func (k *claimCheck) unpolluted() string {
	for _, s := range bothArms(k.f.base, k.f.cand) {
		if s.TimedUploads != 0 || s.TimedAllocations != 0 || s.TimedHostSyncs != 0 {
			return fmt.Sprintf("polluted timed region: %s sample %d has %d timed uploads, %d allocations and %d host syncs; required 0 of each. Fix: keep uploads, allocations and extra syncs out of the timed region",
				s.Arm, s.Index, s.TimedUploads, s.TimedAllocations, s.TimedHostSyncs)
		}
	}
	return ""
}

// enoughSamples requires MinSamplesPerArm samples of each recorded arm.
func (k *claimCheck) enoughSamples() string {
	k.v.BaselineN, k.v.CandidateN = len(k.f.base), len(k.f.cand)
	for _, arm := range [][]*Sample{k.f.base, k.f.cand} {
		if len(arm) > 0 && len(arm) < MinSamplesPerArm {
			return fmt.Sprintf("too few samples: arm %s has %d samples; required at least %d. Fix: record more samples per arm",
				arm[0].Arm, len(arm), MinSamplesPerArm)
		}
	}
	return ""
}

// judge compares the metric with the claim (step 8): the speedup's
// interval with the required speedup, or the per-iteration time's interval
// with its bound (judgeInterval says which outcome each position gives).
func (k *claimCheck) judge() Verdict {
	c, v := k.c, k.v
	cand, err := metricValues(c.Metric, k.f.cand)
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	if c.PerIteration() {
		return checkPerIteration(v, c, k.f.cand, cand)
	}
	base, err := metricValues(c.Metric, k.f.base)
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	v.BaselineMedian = MedianCI(base, Confidence)
	v.CandidateMedian = MedianCI(cand, Confidence)
	v.Speedup = SpeedupCI(base, cand)
	req := c.RequiredSpeedup()
	v.RequiredSpeedupLower = req
	v.Outcome = judgeInterval(v.Speedup, req, true)
	observed := fmt.Sprintf("observed speedup %s (median %s over %s, 95%% CI [%s, %s], n=%d+%d)",
		fmtX(v.Speedup.Center), stats.FormatNs(v.BaselineMedian.Center), stats.FormatNs(v.CandidateMedian.Center),
		fmtX(v.Speedup.Lo), fmtX(v.Speedup.Hi), v.BaselineN, v.CandidateN)
	required := formatBound(req) + "x"
	switch v.Outcome {
	case OutcomeFails:
		v.Reason = fmt.Sprintf("%s lies below the bound: even its upper bound %s is below the required %s. Fix: improve %s, or lower the claim",
			observed, preciseX(v.Speedup.Hi, req), required, c.Candidate)
	case OutcomeUnknown:
		straddle := fmt.Sprintf("its lower bound %s is below the required %s and its upper bound %s reaches it", preciseX(v.Speedup.Lo, req), required, preciseX(v.Speedup.Hi, req))
		v.Reason, v.SettleSamples = unknownReason(observed, straddle, v.Speedup, req, max(v.BaselineN, v.CandidateN))
	}
	return v
}

// checkPerIteration finishes a per-iteration claim (step 8): every sample
// must state the same, non-zero iteration count, and the 95% interval of
// the median ns per iteration is judged against the claim's bound: at or
// below it the claim holds, above it the claim fails, across it the
// outcome is unknown.
func checkPerIteration(v Verdict, c Claim, rows []*Sample, times []float64) Verdict {
	iters := rows[0].Workload.Iterations
	for _, s := range rows {
		if s.Workload.Iterations != iters || iters == 0 {
			v.Reason = fmt.Sprintf("iterations not recorded: %s sample %d states %d iterations and sample %d states %d; required one non-zero count for every sample of a per-iteration claim. Fix: record the workload's iterations (levels, waves) in every row",
				s.Arm, s.Index, s.Workload.Iterations, rows[0].Index, iters)
			return v
		}
	}
	per := make([]float64, len(times))
	for i, t := range times {
		per[i] = t / float64(iters)
	}
	v.Iterations = iters
	v.PerIteration = MedianCI(per, Confidence)
	pi, bound := v.PerIteration, c.MaxNSPerIteration
	v.Outcome = judgeInterval(pi, bound, false)
	observed := fmt.Sprintf("observed %s per iteration (median over %d samples of %d iterations, 95%% CI [%s, %s])",
		stats.FormatNs(pi.Center), len(per), iters, stats.FormatNs(pi.Lo), stats.FormatNs(pi.Hi))
	switch v.Outcome {
	case OutcomeFails:
		v.Reason = fmt.Sprintf("%s lies above the bound: even its lower bound %s is above the required %s. Fix: make %s faster, or raise the bound",
			observed, preciseNs(pi.Lo, bound), stats.FormatNs(bound), c.Candidate)
	case OutcomeUnknown:
		straddle := fmt.Sprintf("its upper bound %s is above the required %s and its lower bound %s meets it", preciseNs(pi.Hi, bound), stats.FormatNs(bound), preciseNs(pi.Lo, bound))
		v.Reason, v.SettleSamples = unknownReason(observed, straddle, pi, bound, len(per))
	}
	return v
}

// bothArms yields the samples of both arms without copying them.
func bothArms(base, cand []*Sample) func(yield func(int, *Sample) bool) {
	return func(yield func(int, *Sample) bool) {
		for i := range base {
			if !yield(i, base[i]) {
				return
			}
		}
		for i := range cand {
			if !yield(len(base)+i, cand[i]) {
				return
			}
		}
	}
}

func otherArm(c Claim, arm string) string {
	if arm == c.Baseline {
		return c.Candidate
	}
	return c.Baseline
}

func metricValues(metric string, rows []*Sample) ([]float64, error) {
	out := make([]float64, len(rows))
	for i, s := range rows {
		switch metric {
		case MetricDeviceNS:
			if s.DeviceNS <= 0 {
				return nil, fmt.Errorf("device time not recorded: %s sample %d has device_ns 0; required a CUDA-event time on every sample for metric device_ns. Fix: record device_ns or judge the claim on wall_ns", s.Arm, s.Index)
			}
			out[i] = s.DeviceNS
		default:
			out[i] = s.WallNS
		}
	}
	return out, nil
}

// StaleFiles lists the files whose fingerprint is none of current's, for
// a warning about evidence no claim uses.
func StaleFiles(files []ResultFile, current Fingerprints) []string {
	var out []string
	for _, f := range files {
		if len(f.Samples) > 0 && !current.Contains(f.Samples[0].Provenance.SourceFingerprint) {
			out = append(out, f.Path)
		}
	}
	return out
}
