package executor

import (
	"testing"
)

// BenchmarkBatchUpload compares 64 buffers uploaded as one batch with 64
// single uploads on the fake: the host-side cost of the executor's
// staging and bookkeeping (the GPU test times the same on a device).
func BenchmarkBatchUpload(b *testing.B) {
	x, _ := newFakeExec(b, h100(b, 1<<30))
	x.opts.StagingChunkBytes = DefaultStagingChunkBytes
	bufs := make([]Buffer, 64)
	data := make([][]byte, 64)
	for i := range bufs {
		var err error
		if bufs[i], err = x.Alloc(4096); err != nil {
			b.Fatal(err)
		}
		data[i] = make([]byte, 4096)
	}
	b.Run("batch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := x.UploadBuffers(bufs, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("single", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, buf := range bufs {
				if err := x.Upload(buf, data[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkWaveStep is the host-side cost of the per-level calls of the
// BFS arms that go through the executor's API: a launch, a launch with its
// readback, and a 4-byte readback.
func BenchmarkWaveStep(b *testing.B) {
	x, _ := newFakeExec(b, h100(b, 1<<30))
	m, err := x.LoadModule([]byte(fakePTX))
	if err != nil {
		b.Fatal(err)
	}
	k, err := m.Kernel("heavy")
	if err != nil {
		b.Fatal(err)
	}
	buf, err := x.Alloc(64)
	if err != nil {
		b.Fatal(err)
	}
	word := make([]byte, 4)
	args := []Arg{Ptr(buf), U64(1), U64(2), U64(3)}
	b.Run("Launch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := x.Launch(k, Linear(1, 32), args...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LaunchRead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := x.LaunchRead(k, Linear(1, 32), buf, 0, word, args...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DownloadRangeInto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := x.DownloadRangeInto(buf, 0, word); err != nil {
				b.Fatal(err)
			}
		}
	})
}
