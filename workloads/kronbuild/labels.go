package kronbuild

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// labels puts the vertex labels into the perm buffer: drawn on the
// device, or with Config.HostPermutation on the host and uploaded.
func (b *builder) labels() error {
	if b.cfg.HostPermutation {
		return b.uploadLabels()
	}
	return b.drawLabels()
}

// uploadLabels draws the labels on the host, as frontier.Kronecker does,
// and uploads them.
func (b *builder) uploadLabels() error {
	start := time.Now()
	perm := frontier.KroneckerPermutation(b.plan.Scale, b.seed)
	if err := b.x.Upload(b.fixed.perm, harness.BytesOf(perm)); err != nil {
		return err
	}
	b.times.Permutation = time.Since(start)
	return nil
}

// drawLabels draws the labels on the device, in the permutation's
// scratch: the shuffle's draws, sorted by (draw, step), linked and
// resolved (see kernels/kronbuild.cu).
func (b *builder) drawLabels() error {
	n := b.plan.Vertices
	if err := b.allocScratch(n-1, b.plan.PermutationBytes); err != nil {
		return err
	}
	permute := func() error {
		if err := b.drawSteps(); err != nil {
			return err
		}
		sorted, _, err := b.sortKeys(n-1, 2*b.plan.Scale)
		if err != nil {
			return err
		}
		links := PermLinksParams[executor.Buffer]{Keys: sorted, Perm: b.fixed.perm, Last: b.fixed.offsets, Count: n - 1, Scale: uint64(b.plan.Scale)}
		if err := b.launch(b.k.permLinks, b.strideGrid(b.k.permLinks, n-1, Threads), links, zeroed{"Last", b.fixed.offsets}); err != nil {
			return err
		}
		return b.launch(b.k.permLabels, b.strideGrid(b.k.permLabels, n, Threads), PermLabelsParams[executor.Buffer]{Perm: b.fixed.perm, Last: b.fixed.offsets, N: n})
	}
	if err := b.phases([]phase{{&b.times.Permutation, permute}}); err != nil {
		return err
	}
	return harness.Free(b.x, harness.Buffers(&b.scratch))
}

// drawSteps draws the shuffle's steps n-1 down to 1 from the PCG seeded
// with b.pcg. A rejected draw shifts every draw after it: the steps below
// the first rejected one are drawn again, from the right draw, until a
// launch rejects nothing (almost always the first).
func (b *builder) drawSteps() error {
	stepHi, draw := b.plan.Vertices-1, uint64(0)
	for stepHi > 0 {
		threads := (stepHi + PermSteps - 1) / PermSteps
		p := PermDrawParams[executor.Buffer]{Keys: b.scratch.keys, Ctl: b.fixed.ctl, Seed1: b.pcg[0], Seed2: b.pcg[1],
			Scale: uint64(b.plan.Scale), StepHi: stepHi, Draw: draw}
		if err := b.launch(b.k.permDraw, executor.Linear(uint32((threads+Threads-1)/Threads), Threads), p, zeroed{"Ctl", b.fixed.ctl}); err != nil {
			return err
		}
		if err := b.sync(); err != nil {
			return err
		}
		rej, err := b.readWord(b.fixed.ctl, CtlReject)
		if err != nil || rej == 0 {
			return err
		}
		step, rejected := rej>>32, rej&(1<<32-1)
		if step < 1 || step > stepHi || rejected == 0 {
			return fmt.Errorf("kronbuild %s: the shuffle's draw kernel reported rejection word %#x for steps %d..1. Fix: this is a bug in the kernels; report it", b.plan.Graph, rej, stepHi)
		}
		b.rejections++
		draw += stepHi - step + 1 + rejected
		stepHi = step - 1
	}
	return nil
}

// readWord reads 64-bit word i of buf.
func (b *builder) readWord(buf executor.Buffer, i uint64) (uint64, error) {
	raw, err := b.x.DownloadRange(buf, i*wordBytes, wordBytes)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(raw), nil
}
