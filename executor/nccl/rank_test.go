package nccl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl/rendezvous"
)

// The fake's timeouts in the tests: a collective that meets finishes in
// microseconds; one that waits for an absent rank gives up after short.
const (
	short = 100 * time.Millisecond
	long  = 5 * time.Second
)

// opener opens rank of ranks over x with id: OpenFakeRank, or OpenRank on
// GPUs.
type opener func(x *executor.Executor, id UniqueID, rank, ranks int) (RankCollectives, error)

func fakeOpener(opts Options) opener {
	return func(x *executor.Executor, id UniqueID, rank, ranks int) (RankCollectives, error) {
		return OpenFakeRank(x, id, rank, ranks, opts)
	}
}

// onRanks opens one rank per executor with one id, each on its own
// goroutine, runs body on each rank that opened, and returns every rank's
// open or body error once all returned.
func onRanks(t *testing.T, xs []*executor.Executor, id UniqueID, open opener, body func(r int, c RankCollectives) error) []error {
	t.Helper()
	errs := make([]error, len(xs))
	var wg sync.WaitGroup
	for r, x := range xs {
		wg.Go(func() {
			c, err := open(x, id, r, len(xs))
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			errs[r] = body(r, c)
		})
	}
	wg.Wait()
	return errs
}

// fill is filled for a goroutine other than the test's: it returns its
// error.
func fill(x *executor.Executor, n int, at func(i int) byte) (executor.Buffer, error) {
	b, err := x.Alloc(uint64(n))
	if err != nil {
		return b, err
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = at(i)
	}
	return b, x.Upload(b, data)
}

// rankData is every rank's source bytes of checkRankCollectives.
func rankData(p, n int) [][]byte {
	rng := rand.New(rand.NewPCG(uint64(p), 5))
	data := make([][]byte, p)
	for i := range data {
		data[i] = make([]byte, p*n+8)
		for j := range data[i] {
			data[i][j] = byte(rng.Uint32())
		}
	}
	return data
}

// checkRankCollectives runs, on every rank at once, an all-gather and an
// all-to-all whose part to the rank itself is a local copy, on random
// data at offsets inside the buffers, and checks every byte and count.
func checkRankCollectives(t *testing.T, xs []*executor.Executor, id UniqueID, open opener) {
	const n = 1000
	p := len(xs)
	data := rankData(p, n)
	errs := onRanks(t, xs, id, open, func(r int, c RankCollectives) error {
		x := xs[r]
		if c.Rank() != r || c.Ranks() != p {
			return fmt.Errorf("rank %d of %d reports %d of %d", r, p, c.Rank(), c.Ranks())
		}
		src, err := fill(x, len(data[r]), func(j int) byte { return data[r][j] })
		if err != nil {
			return err
		}
		dst, err := fill(x, p*n+16, func(int) byte { return 0 })
		if err != nil {
			return err
		}
		st, err := c.AllGather(Region{x, src, 8, n}, Region{x, dst, 16, uint64(p * n)})
		if err != nil {
			return err
		}
		if st.Bytes != uint64((p-1)*n) {
			return fmt.Errorf("all-gather on rank %d moved %d bytes", r, st.Bytes)
		}
		got, err := x.DownloadRange(dst, 16, uint64(p*n))
		if err != nil {
			return err
		}
		for from := range p {
			if !bytes.Equal(data[from][8:8+n], got[from*n:(from+1)*n]) {
				return fmt.Errorf("all-gather rank %d slot %d", r, from)
			}
		}
		// All-to-all: rank r sends its slice [to*n, (to+1)*n) to every rank
		// and receives rank from's into [from*n, ...), in reverse order of
		// peers on the receiving side (matching is per pair, not global).
		var sends, recvs []PeerRegion
		for to := range p {
			sends = append(sends, PeerRegion{to, Region{x, src, uint64(to * n), n}})
		}
		for from := p - 1; from >= 0; from-- {
			recvs = append(recvs, PeerRegion{from, Region{x, dst, uint64(from * n), n}})
		}
		if st, err = c.SendRecv(sends, recvs); err != nil {
			return err
		}
		if st.Bytes != uint64((p-1)*n) {
			return fmt.Errorf("all-to-all on rank %d received %d bytes", r, st.Bytes)
		}
		if got, err = x.DownloadRange(dst, 0, uint64(p*n)); err != nil {
			return err
		}
		for from := range p {
			if !bytes.Equal(data[from][r*n:(r+1)*n], got[from*n:(from+1)*n]) {
				return fmt.Errorf("all-to-all %d -> %d", from, r)
			}
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

func TestFakeRanksRunTheCollectives(t *testing.T) {
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			checkRankCollectives(t, fakeExecutors(t, p), NewFakeUniqueID(), fakeOpener(Options{InitTimeout: long, CollectiveTimeout: long}))
		})
	}
	fakeGroups.mu.Lock()
	defer fakeGroups.mu.Unlock()
	assert.Empty(t, fakeGroups.m, "every communicator left the registry when its ranks closed")
}

// TestFakeRankPairsAndSkips: a pair of ranks exchanging in one direction
// only, parts of zero bytes skipped, several sends to one peer matched in
// order, and an empty SendRecv that still meets.
func TestFakeRankPairsAndSkips(t *testing.T) {
	xs := fakeExecutors(t, 2)
	var got []byte
	errs := onRanks(t, xs, NewFakeUniqueID(), fakeOpener(Options{InitTimeout: long, CollectiveTimeout: long}), func(r int, c RankCollectives) error {
		x := xs[r]
		b, err := fill(x, 8, func(i int) byte { return byte(10*r + i) })
		if err != nil {
			return err
		}
		var sends, recvs []PeerRegion
		if r == 0 {
			sends = []PeerRegion{{1, Region{x, b, 0, 2}}, {1, Region{x, b, 4, 0}}, {1, Region{x, b, 6, 2}}}
		} else {
			recvs = []PeerRegion{{0, Region{x, b, 0, 2}}, {0, Region{x, b, 2, 2}}}
		}
		st, err := c.SendRecv(sends, recvs)
		if err != nil {
			return err
		}
		if _, err := c.SendRecv(nil, nil); err != nil {
			return err
		}
		if r == 1 {
			if st.Bytes != 4 {
				return fmt.Errorf("rank 1 received %d bytes", st.Bytes)
			}
			got, err = x.Download(b)
		}
		return err
	})
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, []byte{0, 1, 6, 7, 14, 15, 16, 17}, got)
}

func TestFakeRankChecksItsArguments(t *testing.T) {
	xs := fakeExecutors(t, 2)
	x, other := xs[0], xs[1]
	f, err := OpenFakeRank(x, NewFakeUniqueID(), 0, 1, Options{})
	require.NoError(t, err)
	defer f.Close()
	a := filled(t, x, 16, func(int) byte { return 0 })
	b := filled(t, other, 16, func(int) byte { return 0 })
	gathers := []struct {
		name       string
		send, recv Region
		msg        string
	}{
		{"send elsewhere", Region{other, b, 0, 8}, Region{x, a, 0, 8}, "send is not on this rank's executor"},
		{"send past its buffer", Region{x, a, 12, 8}, Region{x, a, 0, 8}, "send is 8 bytes at offset 12 of a 16-byte buffer"},
		{"recv past its buffer", Region{x, a, 0, 8}, Region{x, a, 16, 1}, "recv is 1 bytes at offset 16"},
		{"recv not ranks x send", Region{x, a, 0, 8}, Region{x, a, 0, 4}, "recv is 4 bytes, not 1 ranks x 8"},
	}
	for _, g := range gathers {
		t.Run(g.name, func(t *testing.T) {
			_, err := f.AllGather(g.send, g.recv)
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			assert.ErrorContains(t, err, g.msg)
			assert.ErrorContains(t, err, "Fix:")
		})
	}
	ra := Region{x, a, 0, 4}
	sends := []struct {
		name         string
		sends, recvs []PeerRegion
		msg          string
	}{
		{"peer out of range", []PeerRegion{{1, ra}}, nil, "sends[0] names rank 1 of 1"},
		{"negative peer", nil, []PeerRegion{{-1, ra}}, "recvs[0] names rank -1 of 1"},
		{"region elsewhere", nil, []PeerRegion{{0, Region{other, b, 0, 4}}}, "recvs[0] is not on this rank's executor"},
		{"unmatched send to itself", []PeerRegion{{0, ra}}, nil, "hold 1 sends to rank 0 itself and 0 receives from it"},
		{"lengths to itself", []PeerRegion{{0, ra}}, []PeerRegion{{0, Region{x, a, 8, 2}}}, "sends[0] sends 4 bytes to rank 0 itself into recvs[0] of 2"},
	}
	for _, s := range sends {
		t.Run(s.name, func(t *testing.T) {
			_, err := f.SendRecv(s.sends, s.recvs)
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			assert.ErrorContains(t, err, s.msg)
		})
	}
	// An all-gather of nothing returns at once, and a checked call leaves
	// the communicator usable.
	st, err := f.AllGather(Region{x, a, 0, 0}, Region{x, a, 0, 0})
	require.NoError(t, err)
	assert.Zero(t, st.Bytes)
	require.NoError(t, f.Close())
	_, err = f.AllGather(ra, ra)
	assert.ErrorContains(t, err, "communicator is closed")
}

func TestOpenFakeRankErrors(t *testing.T) {
	xs := fakeExecutors(t, 2)
	id := NewFakeUniqueID()
	opened := make(chan *FakeRank, 1)
	go func() {
		f, _ := OpenFakeRank(xs[0], id, 0, 2, Options{InitTimeout: long})
		opened <- f
	}()
	// Wait until rank 0 is in the registry.
	require.Eventually(t, func() bool {
		fakeGroups.mu.Lock()
		defer fakeGroups.mu.Unlock()
		return fakeGroups.m[id] != nil
	}, long, time.Millisecond)
	cases := []struct {
		name        string
		x           *executor.Executor
		rank, ranks int
		msg         string
	}{
		{"nil executor", nil, 1, 2, "executor is nil"},
		{"no ranks", xs[1], 0, 0, "ranks is 0, outside 1..65536"},
		{"rank past ranks", xs[1], 2, 2, "rank is 2, outside 0..1"},
		{"another size", xs[1], 1, 3, "ranks is 3, but the ranks that joined this unique id have 2"},
		{"duplicate rank", xs[1], 0, 2, "rank 0 has joined this unique id already"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenFakeRank(tc.x, id, tc.rank, tc.ranks, Options{InitTimeout: short})
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	f1, err := OpenFakeRank(xs[1], id, 1, 2, Options{InitTimeout: long})
	require.NoError(t, err)
	f0 := <-opened
	require.NotNil(t, f0)
	require.NoError(t, f0.Close())
	require.NoError(t, f1.Close())
}

// TestFakeRankTimesOut: a rank that never joins, or joins but never calls
// the collective, makes the others fail with a *TimeoutError that names
// the operation, the rank, the timeout and the missing ranks; the
// communicator is aborted and every later call says so.
func TestFakeRankTimesOut(t *testing.T) {
	opts := Options{InitTimeout: short, CollectiveTimeout: short}
	cases := []struct {
		name    string
		ranks   int
		absent  int // the rank that never opens, or -1
		idle    int // the rank that opens but calls nothing, or -1
		op      string
		missing []int
	}{
		{"a rank never joins", 3, 2, -1, "ncclCommInitRank", []int{2}},
		{"a rank never calls AllGather", 3, -1, 1, "AllGather", []int{1}},
		{"a rank never calls SendRecv", 2, -1, 0, "SendRecv", []int{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs := fakeExecutors(t, tc.ranks)
			id := NewFakeUniqueID()
			errs := make([]error, tc.ranks)
			later := make([]error, tc.ranks)
			var wg sync.WaitGroup
			for r := range tc.ranks {
				if r == tc.absent {
					continue
				}
				wg.Go(func() {
					t0 := time.Now()
					f, err := OpenFakeRank(xs[r], id, r, tc.ranks, opts)
					if err != nil {
						errs[r] = err
						return
					}
					defer f.Close()
					if r == tc.idle {
						// Called only after the others gave up: the
						// communicator is aborted by then.
						time.Sleep(3 * short)
						_, later[r] = f.AllGather(Region{}, Region{})
						return
					}
					b, err := fill(xs[r], 8*tc.ranks, func(int) byte { return 1 })
					if err != nil {
						errs[r] = err
						return
					}
					if tc.op == "SendRecv" {
						_, errs[r] = f.SendRecv([]PeerRegion{{0, Region{xs[r], b, 0, 8}}}, []PeerRegion{{0, Region{xs[r], b, 8, 8}}})
					} else {
						_, errs[r] = f.AllGather(Region{xs[r], b, 0, 8}, Region{xs[r], b, 0, uint64(8 * tc.ranks)})
					}
					if time.Since(t0) > short+long/2 {
						errs[r] = fmt.Errorf("rank %d waited %v", r, time.Since(t0))
					}
				})
			}
			wg.Wait()
			for r, err := range errs {
				if r == tc.absent || r == tc.idle {
					continue
				}
				var te *TimeoutError
				require.ErrorAs(t, err, &te, "rank %d", r)
				assert.Equal(t, tc.op, te.Op)
				assert.Equal(t, tc.missing, te.Missing)
				assert.Equal(t, short, te.Timeout)
				assert.Contains(t, err.Error(), fmt.Sprintf("of %d did not complete within 100ms (rank %d never joined it)", tc.ranks, tc.missing[0]))
				assert.Contains(t, err.Error(), "Fix:")
			}
			if tc.idle >= 0 {
				var te *TimeoutError
				require.ErrorAs(t, later[tc.idle], &te)
				assert.ErrorContains(t, later[tc.idle], fmt.Sprintf("nccl: the communicator of rank %d was aborted: nccl: %s on rank", tc.idle, tc.op))
			}
		})
	}
}

// TestFakeRanksRefuseMismatchedCalls: what only every rank's arguments
// together show fails every rank with an *ArgumentError.
func TestFakeRanksRefuseMismatchedCalls(t *testing.T) {
	cases := []struct {
		name string
		call func(r int, x *executor.Executor, b executor.Buffer, c RankCollectives) error
		msg  string
	}{
		{"all-gather lengths", func(r int, x *executor.Executor, b executor.Buffer, c RankCollectives) error {
			n := uint64(4 + 4*r)
			_, err := c.AllGather(Region{x, b, 0, n}, Region{x, b, 0, 2 * n})
			return err
		}, "send is 8 bytes on rank 1 and 4 on rank 0 (every rank sends the same length)"},
		{"send without a receive", func(r int, x *executor.Executor, b executor.Buffer, c RankCollectives) error {
			var sends []PeerRegion
			if r == 0 {
				sends = []PeerRegion{{1, Region{x, b, 0, 4}}}
			}
			_, err := c.SendRecv(sends, nil)
			return err
		}, "sends on rank 0 hold 1 regions to rank 1, which receives 0 from it"},
		{"send and receive lengths", func(r int, x *executor.Executor, b executor.Buffer, c RankCollectives) error {
			_, err := c.SendRecv([]PeerRegion{{1 - r, Region{x, b, 0, uint64(2 + r)}}}, []PeerRegion{{1 - r, Region{x, b, 8, 2}}})
			return err
		}, "send 0 to rank 0 is 3 bytes, its receive there 2"},
		{"different collectives", func(r int, x *executor.Executor, b executor.Buffer, c RankCollectives) error {
			if r == 0 {
				_, err := c.AllGather(Region{x, b, 0, 4}, Region{x, b, 0, 8})
				return err
			}
			_, err := c.SendRecv(nil, nil)
			return err
		}, "collective 0 is"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs := fakeExecutors(t, 2)
			errs := onRanks(t, xs, NewFakeUniqueID(), fakeOpener(Options{InitTimeout: long, CollectiveTimeout: long}), func(r int, c RankCollectives) error {
				b, err := fill(xs[r], 16, func(int) byte { return 0 })
				if err != nil {
					return err
				}
				return tc.call(r, xs[r], b, c)
			})
			for r, err := range errs {
				var ae *ArgumentError
				require.ErrorAs(t, err, &ae, "rank %d", r)
				assert.ErrorContains(t, err, tc.msg)
			}
		})
	}
}

// TestRendezvousThenFakeRanks bootstraps as separate processes would: rank
// 0 makes the unique id, the rendezvous hands it to every rank over
// loopback, and every rank opens its rank with it and all-gathers.
func TestRendezvousThenFakeRanks(t *testing.T) {
	const p = 3
	xs := fakeExecutors(t, p)
	file := t.TempDir() + "/rendezvous.addr"
	var _ = rendezvous.Payload(UniqueID{}) // the two types convert
	errs := make([]error, p)
	gathered := make([][]byte, p)
	var wg sync.WaitGroup
	for r := range p {
		wg.Go(func() {
			cfg := rendezvous.Config{Rank: r, WorldSize: p, File: file, DeviceKey: "fake", Timeout: long}
			pl, err := rendezvous.Exchange(context.Background(), cfg, func() (rendezvous.Payload, error) {
				return rendezvous.Payload(NewFakeUniqueID()), nil
			})
			if err != nil {
				errs[r] = err
				return
			}
			f, err := OpenFakeRank(xs[r], UniqueID(pl), r, p, Options{InitTimeout: long, CollectiveTimeout: long})
			if err != nil {
				errs[r] = err
				return
			}
			defer f.Close()
			s, err := fill(xs[r], 2, func(int) byte { return byte(r + 1) })
			if err != nil {
				errs[r] = err
				return
			}
			d, err := fill(xs[r], 2*p, func(int) byte { return 0 })
			if err != nil {
				errs[r] = err
				return
			}
			if _, errs[r] = f.AllGather(Region{xs[r], s, 0, 2}, Region{xs[r], d, 0, 2 * p}); errs[r] == nil {
				gathered[r], errs[r] = xs[r].Download(d)
			}
		})
	}
	wg.Wait()
	for r := range p {
		require.NoError(t, errs[r], "rank %d", r)
		assert.Equal(t, []byte{1, 1, 2, 2, 3, 3}, gathered[r])
	}
}

func TestTimeoutErrorNamesTheOperation(t *testing.T) {
	e := &TimeoutError{Op: "AllGather", Rank: 1, Ranks: 4, Timeout: time.Minute}
	assert.Equal(t, "nccl: AllGather on rank 1 of 4 did not complete within 1m0s; the communicator was aborted. Fix: make every rank call the same collectives in the same order with matching lengths, check the other ranks' errors, and raise Options.CollectiveTimeout if the transfer is only slow", e.Error())
	e = &TimeoutError{Op: "ncclCommInitRank", Rank: 0, Ranks: 4, Timeout: time.Second, Missing: []int{2, 3}}
	assert.Contains(t, e.Error(), "nccl: ncclCommInitRank on rank 0 of 4 did not complete within 1s (ranks 2, 3 never joined it); the communicator was aborted. Fix: start every rank with the same unique id")
	assert.Equal(t, DefaultCollectiveTimeout, Options{}.collectiveTimeout())
	assert.Equal(t, DefaultInitTimeout, Options{}.initTimeout())
	assert.Equal(t, time.Second, Options{CollectiveTimeout: time.Second}.collectiveTimeout())
	assert.NotEqual(t, NewFakeUniqueID(), NewFakeUniqueID())
}
