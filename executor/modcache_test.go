package executor

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeepTopK(t *testing.T) {
	assert.Equal(t, []int{1, 3}, KeepTopK([]uint64{1, 5, 2, 5}, 2))
	assert.Equal(t, []int{0, 1}, KeepTopK([]uint64{3, 3, 3}, 2), "ties go to the lower index")
	assert.Equal(t, []int{2}, KeepTopK([]uint64{0, 0, 1, 0}, 3), "zero counts are never kept")
	assert.Empty(t, KeepTopK(nil, 4))
	assert.Empty(t, KeepTopK([]uint64{4}, 0))
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		counts := make([]uint64, r.IntN(40))
		for j := range counts {
			counts[j] = uint64(r.IntN(5))
		}
		k := r.IntN(45)
		keep := KeepTopK(counts, k)
		require.LessOrEqual(t, len(keep), k)
		kept := map[int]bool{}
		for _, i := range keep {
			kept[i] = true
			require.NotZero(t, counts[i])
		}
		// Every dropped non-zero entry ranks below every kept one.
		for j, c := range counts {
			if kept[j] || c == 0 {
				continue
			}
			require.Len(t, keep, k, "a non-zero entry is dropped only when k are kept")
			for _, i := range keep {
				require.True(t, counts[i] > c || (counts[i] == c && i < j))
			}
		}
	}
}

func TestModuleKeyFor(t *testing.T) {
	a := ModuleKeyFor(9, 0, []byte("ptx"))
	assert.Equal(t, a, ModuleKeyFor(9, 0, []byte("ptx")))
	assert.NotEqual(t, a, ModuleKeyFor(8, 0, []byte("ptx")))
	assert.NotEqual(t, a, ModuleKeyFor(9, 0, []byte("ptx ")))
	assert.Len(t, a.String(), 64)
}

func TestModuleCacheEvictsAtSoftCap(t *testing.T) {
	f := NewFake(FakeConfig{Device: h100(t, 1<<30), Kernels: fakeKernels()})
	x, err := New(f, Options{SkipPTXProbe: true})
	require.NoError(t, err)
	first, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	_, err = x.LoadModule([]byte(fakePTX)) // access 2: kept on eviction
	require.NoError(t, err)
	k, err := first.Kernel("add_one")
	require.NoError(t, err)
	var second *Module
	for i := 1; i < ModuleCacheSoftCap; i++ {
		m, err := x.LoadModule([]byte(fmt.Sprintf("%s// %d\n", fakePTX, i)))
		require.NoError(t, err)
		if i == 1 {
			second = m
		}
	}
	assert.Equal(t, ModuleCacheSoftCap, f.Stats().Modules)
	_, err = x.LoadModule([]byte(fakePTX + "// new\n"))
	require.NoError(t, err)
	assert.Equal(t, ModuleCacheKeepAfter+1, f.Stats().Modules)
	assert.False(t, first.unloaded, "the most used module survives")
	assert.False(t, second.unloaded, "ties keep the lower index")
	b, err := x.Alloc(64)
	require.NoError(t, err)
	_, err = x.Launch(k, Linear(1, 1), Ptr(b), U64(1))
	require.NoError(t, err)
	last, err := x.LoadModule([]byte(fmt.Sprintf("%s// %d\n", fakePTX, ModuleCacheSoftCap-1)))
	require.NoError(t, err)
	kl, err := last.Kernel("add_one")
	require.NoError(t, err)
	_ = kl
}
