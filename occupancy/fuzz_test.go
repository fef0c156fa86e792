package occupancy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/strictjson"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func FuzzLoadDeviceJSON(f *testing.F) {
	for _, p := range Profiles() {
		b, _ := json.Marshal(p.Device)
		f.Add(b)
	}
	for _, p := range Profiles()[:3] {
		b, _ := json.Marshal(NewProfileDocument(p.Short, p.Device, true))
		f.Add(b)
	}
	f.Add([]byte(`{"schema":"gpuplan.device-profile/v2","device":{}}`))
	f.Add([]byte(`{"schema":"gpuplan.device-profile/v1","device":null}`))
	f.Add([]byte(`{"name":"x"}`))
	f.Add([]byte(`{"sm_count": -1}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte("{}\x00"))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data), func() {
			d, err := LoadDeviceJSON("fuzz.json", data)
			if err != nil {
				var se *strictjson.Error
				if !errors.As(err, &se) {
					t.Fatalf("error of type %T: %v", err, err)
				}
				if !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error without Fix: %v", err)
				}
				// Only errors about the whole document may name no field.
				if se.Field == "" && !wholeDocumentError(se.Msg) {
					t.Fatalf("error names no field: %v", err)
				}
				return
			}
			if err := d.Validate(); err != nil {
				t.Fatalf("loaded device does not validate: %v", err)
			}
			// A loaded device works with every model entry point without panicking.
			r, err := Compute(d, Kernel{RegistersPerThread: 32, DynamicSharedBytes: 1024}, d.MaxThreadsPerBlock)
			if err != nil {
				t.Fatalf("Compute on a valid device: %v", err)
			}
			if r.ActiveBlocksPerSM > d.MaxBlocksPerSM || r.ActiveWarpsPerSM > d.MaxThreadsPerSM/d.WarpSize {
				t.Fatalf("result exceeds caps: %+v", r)
			}
			if _, _, err := MaxPotentialBlockSize(d, Kernel{RegistersPerThread: 64}); err != nil {
				t.Fatalf("MaxPotentialBlockSize on a valid device: %v", err)
			}
			_ = EstimateOccupancy(d, KernelResourceUsage{RegsPerThread: 32}, 256)
			_ = d.BandwidthBytesPerSec()
			_ = Closest(d)
		})
	})
}

// errorField extracts the field an error names, or "".
func errorField(err error) string {
	var ie *InputError
	var de *InvalidDeviceError
	switch {
	case errors.As(err, &ie):
		return ie.Field
	case errors.As(err, &de):
		return de.Field
	}
	return ""
}

func FuzzCompute(f *testing.F) {
	f.Add(uint8(10), 10, 0, 0, false, 0, 0, 96)
	f.Add(uint8(10), 10, 0, 20000, false, 0, 0, 96)
	f.Add(uint8(10), 238, 0, 0, false, 0, 0, 128)
	f.Add(uint8(0), -1, -1, -1, true, -1, -2, 0)
	f.Add(uint8(3), 255, 1<<20, 1<<30, true, 33, 50, 1025)
	f.Fuzz(func(t *testing.T, profile uint8, regs, static, dyn int, optIn bool, kmax, carve, block int) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, 64, func() {
			ps := Profiles()
			d := ps[int(profile)%len(ps)].Device
			k := Kernel{RegistersPerThread: regs, StaticSharedBytes: static, DynamicSharedBytes: dyn, OptIn: optIn, MaxThreadsPerBlock: kmax, CarveoutPercent: carve}
			r, err := Compute(d, k, block)
			if err != nil {
				if errorField(err) == "" || !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error does not name a field or lacks Fix: %v", err)
				}
				return
			}
			if r.ActiveBlocksPerSM < 0 || r.ActiveBlocksPerSM > d.MaxBlocksPerSM ||
				r.ActiveWarpsPerSM > d.MaxThreadsPerSM/d.WarpSize || r.Occupancy < 0 || r.Occupancy > 1 {
				t.Fatalf("result exceeds caps: %+v", r)
			}
			g, err := CoResidentGrid(d, k, block)
			if err != nil || g != r.ActiveBlocksPerSM*d.SMCount {
				t.Fatalf("CoResidentGrid = %d, %v; want %d", g, err, r.ActiveBlocksPerSM*d.SMCount)
			}
			bs, grid, err := MaxPotentialBlockSize(d, k)
			if err != nil {
				t.Fatalf("MaxPotentialBlockSize: %v", err)
			}
			if bs != 0 {
				best, err := Compute(d, k, bs)
				if err != nil || best.ActiveThreadsPerSM < r.ActiveThreadsPerSM && block%32 == 0 {
					t.Fatalf("MaxPotentialBlockSize %d (%+v) worse than block %d (%+v)", bs, best, block, r)
				}
				if grid != best.ActiveBlocksPerSM*d.SMCount {
					t.Fatalf("min grid %d, want %d", grid, best.ActiveBlocksPerSM*d.SMCount)
				}
			}
		})
	})
}

func FuzzVyreEstimate(f *testing.F) {
	f.Add(uint32(16), uint32(0), uint32(256), uint32(64), uint32(0), uint32(512), 32, 2048, 65536, 262144)
	f.Add(^uint32(0), uint32(0), uint32(2), uint32(1), uint32(1), uint32(1), 32, 1<<31-1, 1<<31-1, 1<<31-1)
	f.Fuzz(func(t *testing.T, regsA, sharedA, wgA, regsB, sharedB, wgB uint32, warp, threadsSM, regsSM, sharedSM int) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, 80, func() {
			d := Blackwell5090Default()
			d.WarpSize, d.MaxThreadsPerSM, d.RegistersPerSM, d.SharedMemPerSM = warp, threadsSM, regsSM, sharedSM
			a := KernelResourceUsage{RegsPerThread: regsA, SharedBytesPerBlock: sharedA}
			b := KernelResourceUsage{RegsPerThread: regsB, SharedBytesPerBlock: sharedB}
			e := EstimateOccupancy(d, a, wgA)
			if e.OccupancyBPS > 10000 || (e.BlocksPerSM == 0) != (e == OccupancyEstimate{}) {
				t.Fatalf("bad estimate %+v", e)
			}
			dec := CanLaunchConcurrently(d, a, wgA, b, wgB)
			if dec.Concurrent != (dec.Reason == SerializeNone) {
				t.Fatalf("inconsistent decision %+v", dec)
			}
			if dec.Concurrent && (!e.IsRunnable() || !EstimateOccupancy(d, b, wgB).IsRunnable()) {
				t.Fatalf("concurrent with an unrunnable kernel")
			}
			_ = CooperativeThreadResidencyBlockLimit(d, wgA)
			_, _ = PickWorkgroupSizeForOccupancy(d, a, []uint32{wgA, wgB})
		})
	})
}

func FuzzDiagnoseKernelLaunchShape(f *testing.F) {
	f.Add("frontier", uint32(9), uint32(2), uint32(1), uint32(128), uint32(2), uint32(1), uint32(0), true, false, uint64(16), true)
	f.Fuzz(func(t *testing.T, name string, gx, gy, gz, bx, by, bz, dyn uint32, coop, tensor bool, limit uint64, hasLimit bool) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(name)+88, func() {
			dev := EnvelopeFromDevice(Blackwell5090Default(), false)
			var lp *uint64
			if hasLimit {
				lp = &limit
			}
			d, err := DiagnoseKernelLaunchShape(name, dev, CudaKernelLaunchShape{Grid: [3]uint32{gx, gy, gz}, Block: [3]uint32{bx, by, bz},
				DynamicSharedMemoryBytes: dyn, Cooperative: coop, RequiresTensorCores: tensor}, lp)
			if err != nil {
				if !strings.Contains(err.Error(), "Fix:") || !(strings.Contains(err.Error(), "threads per block") || strings.Contains(err.Error(), "grid blocks")) {
					t.Fatalf("bad error: %v", err)
				}
				return
			}
			msg := d.Message()
			if !strings.HasPrefix(msg, KernelCapabilityMessageVersion+"|kernel="+name+"|status=") {
				t.Fatalf("bad message %q", msg)
			}
			if d.IsLaunchable() != (d.Capability.OK() && !d.ResidencyBlocked()) {
				t.Fatalf("inconsistent launchability")
			}
		})
	})
}

// wholeDocumentError reports whether a decoding error is about the document
// as a whole (empty, malformed, cut short or followed by more data), where
// no field can be named.
func wholeDocumentError(msg string) bool {
	for _, prefix := range []string{"input is empty", "malformed JSON", "JSON input ends early", "trailing data"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
