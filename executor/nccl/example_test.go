package nccl_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/occupancy"
)

// ExampleNewFake gathers one word from each of two ranks on every rank,
// through the host. On GPUs, nccl.Open gives the same collectives over
// NCCL.
func ExampleNewFake() {
	dev, _ := occupancy.Lookup("h200")
	var xs []*executor.Executor
	var send, recv []nccl.Region
	for r := range 2 {
		x, _ := executor.New(executor.NewFake(executor.FakeConfig{Device: dev}), executor.Options{SkipPTXProbe: true})
		defer x.Close()
		s, _ := x.Alloc(4)
		_ = x.Upload(s, []byte{byte(r), byte(r), byte(r), byte(r)})
		d, _ := x.Alloc(8)
		xs, send, recv = append(xs, x), append(send, nccl.Region{X: x, Buf: s, Len: 4}), append(recv, nccl.Region{X: x, Buf: d, Len: 8})
	}
	c, _ := nccl.NewFake(xs)
	st, err := c.AllGather(send, recv)
	got, _ := xs[1].Download(recv[1].Buf)
	fmt.Println(got, st.Bytes, err)
	// Output: [0 0 0 0 1 1 1 1] 8 <nil>
}

// ExampleOpenFakeRank runs two ranks as goroutines, one executor each,
// that join one fake communicator by its id and all-gather a word each. In
// one process per GPU, rank 0's nccl.NewUniqueID goes to the other
// processes through package rendezvous, and each opens nccl.OpenRank.
func ExampleOpenFakeRank() {
	dev, _ := occupancy.Lookup("h200")
	id := nccl.NewFakeUniqueID()
	got := make([][]byte, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			x, _ := executor.New(executor.NewFake(executor.FakeConfig{Device: dev}), executor.Options{SkipPTXProbe: true})
			defer x.Close()
			c, err := nccl.OpenFakeRank(x, id, r, 2, nccl.Options{InitTimeout: 5 * time.Second})
			if err != nil {
				fmt.Println(err)
				return
			}
			defer c.Close()
			s, _ := x.Alloc(4)
			_ = x.Upload(s, []byte{byte(r), byte(r), byte(r), byte(r)})
			d, _ := x.Alloc(8)
			if _, err := c.AllGather(nccl.Region{X: x, Buf: s, Len: 4}, nccl.Region{X: x, Buf: d, Len: 8}); err != nil {
				fmt.Println(err)
				return
			}
			got[r], _ = x.Download(d)
		})
	}
	wg.Wait()
	fmt.Println(got[0], got[1])
	// Output: [0 0 0 0 1 1 1 1] [0 0 0 0 1 1 1 1]
}
