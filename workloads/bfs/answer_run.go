package bfs

import (
	"encoding/binary"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// AnswerLevels is how many levels RunAnswer counts in the dispatch that
// reads its answer, before the traversal's depth is known: a traversal of
// more levels counts them again in one more dispatch (LevelCounts). The
// graphs of small diameter a query server holds need one.
const AnswerLevels = 64

// RunAnswer is Run, then LevelsOf(targets) and LevelCounts(Run.Levels), in
// fewer host waits: the target ids are uploaded before the traversal, and
// after it one dispatch (an executor.Sequence) launches the gather and the
// level count kernels and reads back the result words, the first
// AnswerLevels entries of the decision log, the targets' levels and the
// first AnswerLevels level counts together, with one host wait. Run,
// LevelsOf and LevelCounts wait once for each launch and each read. Only a
// traversal deeper than AnswerLevels reads its log and its counts again.
//
// The arm, the root and every target are checked before anything is
// allocated or launched. The answer buffers grow on demand and stay with
// the session until Close (ReserveAnswers sizes them ahead). The Run's
// wall and device times cover the traversal alone, as Run's do; its
// accounting covers the answer's reads too.
func (s *Session) RunAnswer(arm Arm, root int32, targets []int32) (Run, RootAnswer, error) {
	if err := s.checkRun(arm, root); err != nil {
		return Run{}, RootAnswer{}, err
	}
	q, err := s.newAnswerQuery(targets)
	if err != nil {
		return Run{}, RootAnswer{}, err
	}
	r, m, err := s.timedRun(arm, root)
	if err != nil {
		return r, RootAnswer{}, err
	}
	ans, err := s.readAnswer(&r, q)
	r.Accounting = m.Finish()
	return r, ans, err
}

// answerQuery is what RunAnswer reads after its traversal: the targets'
// levels (count of them) and the counts of the first levels levels.
type answerQuery struct {
	count, levels uint64
}

// newAnswerQuery checks the targets, sizes the answer buffers for them and
// uploads their ids (one upload; none for no targets).
func (s *Session) newAnswerQuery(targets []int32) (answerQuery, error) {
	if err := checkVertices(s.g, "RunAnswer targets", targets); err != nil {
		return answerQuery{}, err
	}
	q := answerQuery{count: uint64(len(targets)), levels: uint64(min(AnswerLevels, s.g.NumVertices()))}
	size, err := checked.Mul(q.count, 4, "RunAnswer targets (4 bytes each)")
	if err != nil {
		return answerQuery{}, err
	}
	if err := s.growAnswers(size, size, 8*q.levels); err != nil {
		return answerQuery{}, err
	}
	if q.count == 0 {
		return q, nil
	}
	return q, s.x.UploadAt(s.ans.in, 0, bytesOf(targets))
}

// answerSequence is the dispatch after a traversal: the gather (when there
// are targets) and the level counts, then the reads of the result words,
// the log's first entries (for an arm that logs its steps), the targets'
// levels and the counts. outs are the reads' slots, in that order, the
// slot of a read that is left out nil.
func (s *Session) answerSequence(arm Arm, q answerQuery) (executor.Sequence, [4][]byte) {
	n := uint64(s.g.NumVertices())
	counts := kernelabi.MustArgs(LevelCountsParams[executor.Buffer]{Level: s.buf.level, Counts: s.ans.counts, N: n, NLevels: q.levels})
	counts[levelCountsArg] = executor.Out(s.ans.counts)
	var seq executor.Sequence
	var outs [4][]byte
	read := func(slot int, b executor.Buffer, off, n uint64) {
		seq.Reads = append(seq.Reads, executor.ReadRequest{Buffer: b, Offset: off, Len: n})
		outs[slot] = make([]byte, n)
	}
	read(0, s.buf.ctl, 4*CtlResult, 4*ResultWords)
	if arm == ArmMegakernel || (arm == ArmDeviceLoop && s.optimizing) {
		read(1, s.buf.log, 0, s.width.LogEntryBytes()*min(q.levels, s.logEntries()))
	}
	if q.count > 0 {
		gather := GatherParams[executor.Buffer]{Level: s.buf.level, Idx: s.ans.in, Out: s.ans.out, N: n, Count: q.count}
		seq.Prefix = append(seq.Prefix, executor.Step{Kernel: s.k.gather, Config: answerLaunch(s.x, q.count, 1), Args: kernelabi.MustArgs(gather)})
		read(2, s.ans.out, 0, 4*q.count)
	}
	seq.Prefix = append(seq.Prefix, executor.Step{Kernel: s.k.counts, Config: answerLaunch(s.x, n, 4), Args: counts})
	read(3, s.ans.counts, 0, 8*q.levels)
	return seq, outs
}

// readAnswer runs the answer's dispatch after r's traversal, checks the
// result words and the logged steps as Run does, and returns the answer.
func (s *Session) readAnswer(r *Run, q answerQuery) (RootAnswer, error) {
	seq, outs := s.answerSequence(r.Arm, q)
	slots := make([][]byte, 0, len(outs))
	for _, o := range outs {
		if o != nil {
			slots = append(slots, o)
		}
	}
	if _, err := s.x.RunSequence(seq, slots); err != nil {
		return RootAnswer{}, err
	}
	if err := s.checkResult(r, outs[0]); err != nil {
		return RootAnswer{}, err
	}
	if err := s.readSteps(r, outs[1]); err != nil {
		return RootAnswer{}, err
	}
	ans := RootAnswer{Root: r.Root, Levels: fromBytes[int32](outs[2], q.count)}
	if uint64(r.Levels) > q.levels {
		var err error
		ans.Counts, err = s.LevelCounts(r.Levels)
		return ans, err
	}
	ans.Counts = fromBytes[uint64](outs[3], uint64(r.Levels))
	return ans, nil
}

// fromBytes decodes count little-endian values of T from raw.
func fromBytes[T int32 | uint64](raw []byte, count uint64) []T {
	out := make([]T, count)
	le := binary.LittleEndian
	if unsafe.Sizeof(T(0)) == 4 {
		for i := range out {
			out[i] = T(int32(le.Uint32(raw[4*i:])))
		}
		return out
	}
	for i := range out {
		out[i] = T(le.Uint64(raw[8*i:]))
	}
	return out
}
