package occupancy

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// driverRecord is what testdata/driver_check.py recorded on a live GPU: the
// device attributes, the kernels' register and static shared memory counts,
// and the driver's occupancy answers.
type driverRecord struct {
	Device  map[string]any `json:"device"`
	Kernels []struct {
		Registers int `json:"registers_per_thread"`
		Static    int `json:"static_shared_bytes"`
	} `json:"kernels"`
	Cases [][6]int `json:"cases"` // kernel, opt_in, carveout, dynamic, block, driver blocks/SM
	MPBS  [][6]int `json:"mpbs"`  // kernel, opt_in, carveout, dynamic, block size, min grid
}

func loadDriverRecord(t *testing.T, path string) driverRecord {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var rec driverRecord
	require.NoError(t, json.NewDecoder(zr).Decode(&rec))
	return rec
}

// The exact model against cuOccupancyMaxActiveBlocksPerMultiprocessor and
// cuOccupancyMaxPotentialBlockSize on a live H200 (driver 580.159.04): 12,420
// configurations of 7 kernels (8 to 255 registers, 0 to 12,000 B static
// shared memory), 23 block sizes, 8 dynamic shared sizes, 6 carveout
// preferences and both opt-in settings. CUDA's carveout 0 ("prefer maximum
// L1") is replayed as 1%, the documented equivalent.
func TestExactModelMatchesDriver(t *testing.T) {
	rec := loadDriverRecord(t, "testdata/driver_h200.json.gz")
	h200 := mustLookup(t, "h200")

	// The built-in profile equals the live device's attributes.
	live, err := json.Marshal(rec.Device)
	require.NoError(t, err)
	var liveDev Device
	require.NoError(t, json.Unmarshal(live, &liveDev))
	liveDev.RegistersPerThread, liveDev.RegisterAllocUnit, liveDev.SubPartitions = h200.RegistersPerThread, h200.RegisterAllocUnit, h200.SubPartitions
	liveDev.SharedMemAllocUnit, liveDev.SharedMemCarveoutsKiB = h200.SharedMemAllocUnit, h200.SharedMemCarveoutsKiB
	assert.Empty(t, Diff(h200, liveDev), "the h200 profile differs from the live device")

	kernel := func(c [6]int) Kernel {
		kr := rec.Kernels[c[0]]
		carve := c[2]
		if carve == 0 {
			carve = 1
		}
		return Kernel{RegistersPerThread: kr.Registers, StaticSharedBytes: kr.Static, DynamicSharedBytes: c[3], OptIn: c[1] == 1, CarveoutPercent: carve}
	}
	require.Len(t, rec.Cases, 12420)
	mismatches := 0
	for _, c := range rec.Cases {
		r, err := Compute(h200, kernel(c), c[4])
		require.NoError(t, err)
		if r.ActiveBlocksPerSM != c[5] {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("case %v: model %d blocks (%s), driver %d", c, r.ActiveBlocksPerSM, r.Limit, c[5])
			}
		}
	}
	assert.Zero(t, mismatches, "of %d cases", len(rec.Cases))

	// cuOccupancyMaxPotentialBlockSize on this driver does not apply a
	// carveout preference between 1 and 100 percent (it answers as with the
	// default carveout), although cuOccupancyMaxActiveBlocksPerMultiprocessor
	// does and cuda_occupancy.h does in both. MaxPotentialBlockSize follows
	// cuda_occupancy.h; this replays the driver's behaviour to pin it down.
	require.Len(t, rec.MPBS, 540)
	differ := 0
	for _, c := range rec.MPBS {
		k := kernel(c)
		bs, grid, err := MaxPotentialBlockSize(h200, k)
		require.NoError(t, err)
		if [2]int{bs, grid} != [2]int{c[4], c[5]} {
			differ++
			assert.Positive(t, c[2], "only carveout preferences differ: %v", c)
		}
		if c[2] > 0 {
			k.CarveoutPercent = -1
			bs, grid, err = MaxPotentialBlockSize(h200, k)
			require.NoError(t, err)
		}
		assert.Equal(t, [2]int{c[4], c[5]}, [2]int{bs, grid}, "max potential block size for %v", c)
	}
	assert.Equal(t, 33, differ)
}
