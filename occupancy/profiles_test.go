package occupancy

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupNamesAndAliases(t *testing.T) {
	tests := []struct{ name, want string }{
		{"h100-sxm", "NVIDIA H100 80GB HBM3"},
		{"H100", "NVIDIA H100 80GB HBM3"},
		{"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3"},
		{"h100-pcie", "NVIDIA H100 PCIe"},
		{"h200", "NVIDIA H200"},
		{"H200_SXM_141GB", "NVIDIA H200"},
		{"a100-80gb", "NVIDIA A100-SXM4-80GB"},
		{"a100", "NVIDIA A100-SXM4-80GB"},
		{"a100-40gb", "NVIDIA A100-SXM4-40GB"},
		{"rtx5090", "NVIDIA GeForce RTX 5090"},
		{"rtx5090-sm120", "NVIDIA GeForce RTX 5090"},
		{"b200", "NVIDIA B200"},
		{"v100", "Tesla V100-SXM2-32GB"},
		{"T4", "Tesla T4"},
		{"a10", "NVIDIA A10"},
		{"l4", "NVIDIA L4"},
		{"L40S", "NVIDIA L40S"},
		{" rtx 4090 ", "NVIDIA GeForce RTX 4090"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Lookup(tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.want, d.Name)
		})
	}
}

func TestLookupUnknownListsNames(t *testing.T) {
	_, err := Lookup("gtx480")
	require.Error(t, err)
	var ue *UnknownDeviceError
	require.True(t, errors.As(err, &ue))
	assert.Equal(t, ProfileNames(), ue.Known)
	for _, n := range ProfileNames() {
		assert.Contains(t, err.Error(), n)
	}
	assert.Contains(t, err.Error(), "Fix:")
}

func TestProfilesAreValidUniqueAndStable(t *testing.T) {
	seen := map[string]string{}
	ps := Profiles()
	require.GreaterOrEqual(t, len(ps), 13)
	for _, p := range ps {
		require.NoError(t, p.Device.Validate(), p.Short)
		for _, n := range append([]string{p.Short}, p.Aliases...) {
			assert.Equal(t, normalizeName(n), n, "names are stored normalized")
			prev, dup := seen[n]
			assert.False(t, dup, "%s is used by %s and %s", n, prev, p.Short)
			seen[n] = p.Short
		}
	}
	assert.Equal(t, ps, Profiles(), "stable order and content")
	// Fresh values: modifying one result does not affect the next.
	ps[0].Device.SharedMemCarveoutsKiB[0] = 999
	assert.NotEqual(t, 999, Profiles()[0].Device.SharedMemCarveoutsKiB[0])
}

// The H200 and H100 numbers measured on live devices.
func TestHopperProfilesMatchFacts(t *testing.T) {
	for _, name := range []string{"h200", "h100-sxm"} {
		d := mustLookup(t, name)
		assert.Equal(t, 132, d.SMCount)
		assert.Equal(t, 2048, d.MaxThreadsPerSM)
		assert.Equal(t, 32, d.MaxBlocksPerSM)
		assert.Equal(t, 1024, d.MaxThreadsPerBlock)
		assert.Equal(t, 65536, d.RegistersPerSM)
		assert.Equal(t, 65536, d.RegistersPerBlock)
		assert.Equal(t, 255, d.RegistersPerThread)
		assert.Equal(t, 256, d.RegisterAllocUnit)
		assert.Equal(t, 4, d.SubPartitions)
		assert.Equal(t, 233472, d.SharedMemPerSM)
		assert.Equal(t, 49152, d.SharedMemPerBlock)
		assert.Equal(t, 232448, d.SharedMemPerBlockOptIn)
		assert.Equal(t, 1024, d.ReservedSharedMemPerBlk)
		assert.Equal(t, 128, d.SharedMemAllocUnit)
		assert.Equal(t, []int{0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, d.SharedMemCarveoutsKiB)
		assert.True(t, d.CooperativeLaunch)
	}
	assert.Equal(t, int64(60<<20), mustLookup(t, "h200").L2Bytes)
	assert.Equal(t, 6016, mustLookup(t, "h200").MemoryBusBits)
	assert.Equal(t, int64(50<<20), mustLookup(t, "h100").L2Bytes)
}

func TestArchitectureRows(t *testing.T) {
	tests := []struct {
		name                                    string
		threads, blocks, smem, optin, res, gran int
	}{
		{"v100", 2048, 32, 96 * 1024, 96 * 1024, 0, 256},
		{"t4", 1024, 16, 64 * 1024, 64 * 1024, 0, 256},
		{"a100", 2048, 32, 164 * 1024, 163 * 1024, 1024, 128},
		{"a10", 1536, 16, 100 * 1024, 99 * 1024, 1024, 128},
		{"l4", 1536, 24, 100 * 1024, 99 * 1024, 1024, 128},
		{"l40s", 1536, 24, 100 * 1024, 99 * 1024, 1024, 128},
		{"rtx4090", 1536, 24, 100 * 1024, 99 * 1024, 1024, 128},
		{"b200", 2048, 32, 228 * 1024, 227 * 1024, 1024, 128},
		{"rtx5090-sm120", 1536, 24, 128 * 1024, 99 * 1024, 1024, 128},
	}
	for _, tc := range tests {
		d := mustLookup(t, tc.name)
		assert.Equal(t, []int{tc.threads, tc.blocks, tc.smem, tc.optin, tc.res, tc.gran},
			[]int{d.MaxThreadsPerSM, d.MaxBlocksPerSM, d.SharedMemPerSM, d.SharedMemPerBlockOptIn, d.ReservedSharedMemPerBlk, d.SharedMemAllocUnit}, tc.name)
	}
}

// vyre's synthetic_device_caps tests.
func TestBlackwell5090MatchesVyre(t *testing.T) {
	d := Blackwell5090Default()
	assert.Equal(t, "NVIDIA GeForce RTX 5090", d.Name)
	assert.Equal(t, 0, d.Ordinal)
	assert.Equal(t, [2]int{12, 0}, [2]int{d.Major, d.Minor})
	assert.Equal(t, int64(34359738368), d.TotalMemoryBytes)
	assert.Equal(t, 1024, d.MaxThreadsPerBlock)
	assert.Equal(t, [3]int{1024, 1024, 64}, d.MaxBlockDim)
	assert.Equal(t, [3]int64{2147483647, 65535, 65535}, d.MaxGridDim)
	assert.Equal(t, 131072, d.SharedMemPerBlock)
	assert.Equal(t, 262144, d.SharedMemPerSM)
	assert.Equal(t, 32, d.WarpSize)
	assert.True(t, d.CooperativeLaunch)
	assert.True(t, d.ConcurrentKernels)
	assert.Equal(t, 2, d.AsyncEngines)
	assert.Equal(t, 170, d.SMCount)
	assert.Equal(t, int64(100663296), d.L2Bytes)
	assert.Equal(t, int64(14000000), d.MemoryClockKHz)
	assert.Equal(t, 512, d.MemoryBusBits)
	assert.Equal(t, 65536, d.RegistersPerBlock)
	assert.Equal(t, 65536, d.RegistersPerSM)
	assert.Equal(t, 2048, d.MaxThreadsPerSM)
	require.NoError(t, d.Validate())

	// A different memory size changes only the memory.
	small := Blackwell5090(512 << 20)
	assert.Equal(t, []FieldDiff{{Field: "total_memory_bytes", A: "34359738368", B: "536870912"}}, Diff(d, small))
	assert.Equal(t, d, mustLookup(t, "rtx5090"))
}

func TestBandwidthNearDatasheet(t *testing.T) {
	tests := []struct {
		name      string
		datasheet float64 // bytes/s
	}{
		{"h100-sxm", 3.35e12},
		{"h200", 4.8e12},
		{"h100-pcie", 2.0e12},
		{"a100-80gb", 2.039e12},
		{"a100-40gb", 1.555e12},
		{"v100", 0.9e12},
		{"t4", 0.32e12},
		{"l40s", 0.864e12},
		{"rtx4090", 1.008e12},
		{"b200", 8.0e12},
		{"rtx5090-sm120", 1.792e12},
	}
	for _, tc := range tests {
		bw := float64(mustLookup(t, tc.name).BandwidthBytesPerSec())
		assert.InEpsilon(t, tc.datasheet, bw, 0.03, "%s: %.3g", tc.name, bw)
	}
	assert.Equal(t, int64(3_352_320_000_000), mustLookup(t, "h100").BandwidthBytesPerSec())
	assert.Equal(t, int64(0), Device{}.BandwidthBytesPerSec())
	assert.Equal(t, int64(0), Device{MemoryClockKHz: 1 << 62, MemoryBusBits: 1 << 30}.BandwidthBytesPerSec())
}

func profileJSON(t testing.TB, d Device) map[string]any {
	t.Helper()
	b, err := json.Marshal(d)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func TestLoadDeviceJSONRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		b, err := json.Marshal(p.Device)
		require.NoError(t, err)
		d, err := LoadDeviceJSON(p.Short+".json", b)
		require.NoError(t, err, p.Short)
		if len(p.Device.SharedMemCarveoutsKiB) == 0 {
			d.SharedMemCarveoutsKiB = p.Device.SharedMemCarveoutsKiB
		}
		assert.Equal(t, p.Device, d, p.Short)
	}
}

// TestLoadDeviceJSONDefaults checks every optional field's default and
// that LoadDeviceJSONDefaults names exactly the fields that got one, in
// Device's order, whether left out or null, in a bare object or a profile
// document.
func TestLoadDeviceJSONDefaults(t *testing.T) {
	all := make([]string, len(optionalDeviceFields))
	for i, f := range optionalDeviceFields {
		all[i] = f.name
	}
	h100 := mustLookup(t, "h100")
	tests := []struct {
		name      string
		edit      func(m map[string]any)
		document  bool
		check     func(t *testing.T, d Device)
		defaulted []string
	}{
		{"complete", func(map[string]any) {}, false, func(t *testing.T, d Device) { assert.Equal(t, h100, d) }, nil},
		{"complete document", func(map[string]any) {}, true, func(t *testing.T, d Device) { assert.Equal(t, h100, d) }, nil},
		{"every optional field left out, cc 9.0", func(m map[string]any) {
			for _, f := range all {
				delete(m, f)
			}
		}, false, func(t *testing.T, d Device) {
			assert.Equal(t, 0, d.Ordinal)
			assert.Equal(t, 256, d.RegisterAllocUnit)
			assert.Equal(t, 4, d.SubPartitions)
			assert.Equal(t, d.SharedMemPerBlock, d.SharedMemPerBlockOptIn)
			assert.Equal(t, 1024, d.ReservedSharedMemPerBlk)
			assert.Equal(t, 128, d.SharedMemAllocUnit)
			assert.Empty(t, d.SharedMemCarveoutsKiB)
			assert.Zero(t, d.L2Bytes)
			assert.Zero(t, d.BandwidthBytesPerSec(), "no bus width or clock: no bandwidth estimate")
			assert.False(t, d.CooperativeLaunch)
			assert.False(t, d.ConcurrentKernels)
			assert.Zero(t, d.AsyncEngines)
			assert.Equal(t, defaultMaxGridDim, d.MaxGridDim)
			assert.Equal(t, defaultMaxBlockDim, d.MaxBlockDim)
		}, all},
		{"every optional field null, cc 7.0", func(m map[string]any) {
			for _, f := range all {
				m[f] = nil
			}
			m["cc_major"] = 7
		}, false, func(t *testing.T, d Device) {
			assert.Equal(t, 0, d.ReservedSharedMemPerBlk)
			assert.Equal(t, 256, d.SharedMemAllocUnit)
		}, all},
		{"inside a document", func(m map[string]any) {
			delete(m, "memory_clock_khz")
			delete(m, "register_alloc_unit")
		}, true, func(t *testing.T, d Device) {
			assert.Zero(t, d.MemoryClockKHz)
			assert.Equal(t, 256, d.RegisterAllocUnit)
		}, []string{"register_alloc_unit", "memory_clock_khz"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := profileJSON(t, h100)
			tc.edit(m)
			var v any = m
			if tc.document {
				v = map[string]any{"schema": ProfileSchema, "device": m}
			}
			b, err := json.Marshal(v)
			require.NoError(t, err)
			d, defaulted, err := LoadDeviceJSONDefaults("x.json", b)
			require.NoError(t, err)
			tc.check(t, d)
			var names []string
			for _, f := range defaulted {
				names = append(names, f.Field)
				assert.NotEmpty(t, f.Value, f.Field)
				assert.NotEmpty(t, f.Meaning, f.Field)
			}
			assert.Equal(t, tc.defaulted, names)
			plain, err := LoadDeviceJSON("x.json", b)
			require.NoError(t, err)
			assert.Equal(t, d, plain, "LoadDeviceJSON decodes the same device")
		})
	}
	_, defaulted, err := LoadDeviceJSONDefaults("x.json", []byte(`{"name":"x"}`))
	require.ErrorContains(t, err, `field "cc_major": required field is missing. Fix:`)
	assert.Nil(t, defaulted)
	m := profileJSON(t, h100)
	delete(m, "memory_bus_bits")
	delete(m, "max_block_dim")
	b, _ := json.Marshal(m)
	_, defaulted, err = LoadDeviceJSONDefaults("x.json", b)
	require.NoError(t, err)
	assert.Equal(t, []DefaultedField{
		{Field: "memory_bus_bits", Value: "0", Meaning: "unknown: no bandwidth estimate"},
		{Field: "max_block_dim", Value: "[1024 1024 64]", Meaning: "every current GPU's block limits"},
	}, defaulted)
}

// TestDeviceFieldsRequiredOrDefaulted checks that every JSON field of
// Device is either required or has a documented default, in Device's
// order, so that no field a profile leaves out silently becomes 0; and
// that LoadDeviceJSON's documentation names each one.
func TestDeviceFieldsRequiredOrDefaulted(t *testing.T) {
	required := map[string]bool{}
	for _, f := range requiredDeviceFields {
		required[f] = true
	}
	var optional []string
	for _, f := range optionalDeviceFields {
		assert.False(t, required[f.name], "%s is both required and optional", f.name)
		optional = append(optional, f.name)
	}
	var wantOptional []string
	typ := reflect.TypeFor[Device]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !required[name] {
			wantOptional = append(wantOptional, name)
		}
		delete(required, name)
	}
	assert.Empty(t, required, "required fields Device does not have")
	assert.Equal(t, wantOptional, optional, "the optional fields, in Device's order")
	assert.Len(t, requiredDeviceFields, 14)

	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "devicejson.go", nil, parser.ParseComments)
	require.NoError(t, err)
	var doc string
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "LoadDeviceJSON" {
			doc = fd.Doc.Text()
		}
	}
	require.NotEmpty(t, doc)
	flat := strings.Join(strings.Fields(doc), " ")
	for _, f := range append(append([]string{}, requiredDeviceFields...), optional...) {
		assert.Contains(t, flat, f, "LoadDeviceJSON's documentation names %s", f)
	}
}

func TestLoadDeviceJSONErrors(t *testing.T) {
	edit := func(f func(m map[string]any)) string {
		m := profileJSON(t, mustLookup(t, "h100"))
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	valid := edit(func(map[string]any) {})
	tests := []struct {
		name, doc, field, msg string
	}{
		{"empty", "", "", "empty"},
		{"not an object", "[1,2]", "", "cannot use"},
		{"trailing data", valid + " {}", "", "trailing data"},
		{"unknown field", edit(func(m map[string]any) { m["sm_cnt"] = 3 }), "sm_cnt", "unknown field"},
		{"type mismatch", edit(func(m map[string]any) { m["sm_count"] = "many" }), "sm_count", "cannot use"},
		{"missing name", edit(func(m map[string]any) { delete(m, "name") }), "name", "required"},
		{"missing sm_count", edit(func(m map[string]any) { delete(m, "sm_count") }), "sm_count", "required"},
		{"null total memory", edit(func(m map[string]any) { m["total_memory_bytes"] = nil }), "total_memory_bytes", "required"},
		{"0 SMs", edit(func(m map[string]any) { m["sm_count"] = 0 }), "sm_count", "at least one SM"},
		{"warp 64", edit(func(m map[string]any) { m["warp_size"] = 64 }), "warp_size", "not 32"},
		{"per-block smem above per-SM", edit(func(m map[string]any) { m["shared_mem_per_block"] = 300000 }), "shared_mem_per_block", "shared_mem_per_sm"},
		{"opt-in below default", edit(func(m map[string]any) { m["shared_mem_per_block_optin"] = 1024 }), "shared_mem_per_block_optin", "outside"},
		{"opt-in above per-SM", edit(func(m map[string]any) { m["shared_mem_per_block_optin"] = 300000 }), "shared_mem_per_block_optin", "outside"},
		{"threads per block above SM", edit(func(m map[string]any) { m["max_threads_per_block"] = 4096 }), "max_threads_per_block", "above"},
		{"threads not warp multiple", edit(func(m map[string]any) { m["max_threads_per_sm"] = 2000 }), "max_threads_per_sm", "multiple"},
		{"regs per block above SM", edit(func(m map[string]any) { m["registers_per_block"] = 1 << 20 }), "registers_per_block", "outside"},
		{"regs per thread 300", edit(func(m map[string]any) { m["registers_per_thread"] = 300 }), "registers_per_thread", "outside"},
		{"carveouts descending", edit(func(m map[string]any) { m["shared_mem_carveouts_kib"] = []int{64, 32} }), "shared_mem_carveouts_kib[1]", "ascending"},
		{"carveout too big", edit(func(m map[string]any) { m["shared_mem_carveouts_kib"] = []int{0, 512} }), "shared_mem_carveouts_kib[1]", "exceeds"},
		{"grid dim 0", edit(func(m map[string]any) { m["max_grid_dim"] = []int{0, 1, 1} }), "max_grid_dim[0]", "outside"},
		{"block dim too big", edit(func(m map[string]any) { m["max_block_dim"] = []int{2048, 1, 1} }), "max_block_dim[0]", "outside"},
		{"cc_minor 10", edit(func(m map[string]any) { m["cc_minor"] = 10 }), "cc_minor", "outside"},
		{"negative l2", edit(func(m map[string]any) { m["l2_bytes"] = -1 }), "l2_bytes", "below 0"},
		{"zero memory", edit(func(m map[string]any) { m["total_memory_bytes"] = 0 }), "total_memory_bytes", "is 0"},
		{"huge SMs", edit(func(m map[string]any) { m["sm_count"] = int64(1) << 40 }), "sm_count", "above"},
		{"4-entry max_grid_dim", edit(func(m map[string]any) { m["max_grid_dim"] = []int{1, 2, 3, 4} }), "max_grid_dim[3]", "more than 3 elements"},
		{"2-entry max_block_dim", edit(func(m map[string]any) { m["max_block_dim"] = []int{1, 2} }), "max_block_dim", "has 2 elements, want 3"},
		{"null carveout", edit(func(m map[string]any) { m["shared_mem_carveouts_kib"] = []any{0, nil} }), "shared_mem_carveouts_kib[1]", "null is not an integer"},
		{"bandwidth overflow", edit(func(m map[string]any) { m["memory_clock_khz"] = int64(1) << 40; m["memory_bus_bits"] = int64(1) << 20 }), "memory_clock_khz", "overflow 63 bits"},
		{"case-only key", strings.Replace(valid, `"sm_count"`, `"SM_Count"`, 1), "SM_Count", "only when case is ignored"},
		{"duplicate key", strings.Replace(valid, `{`, `{"sm_count":1,`, 1), "sm_count", "appears twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadDeviceJSON("dev.json", []byte(tc.doc))
			require.Error(t, err)
			var se *strictjson.Error
			require.True(t, errors.As(err, &se), "%T", err)
			assert.Equal(t, "dev.json", se.Source)
			if tc.field != "" {
				assert.Equal(t, tc.field, se.Field)
			}
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	_, err := LoadDeviceJSON("", []byte("{"))
	assert.ErrorContains(t, err, "<input>")
}

func TestClosestAndDiff(t *testing.T) {
	for _, p := range Profiles() {
		if p.Synthetic {
			continue
		}
		assert.Equal(t, p.Short, Closest(p.Device).Short)
		assert.Empty(t, Diff(p.Device, p.Device))
	}
	// A live H100 SXM with a little less memory and a different name.
	live := mustLookup(t, "h100-sxm")
	live.Name = "NVIDIA H100 80GB HBM3 (live)"
	live.TotalMemoryBytes -= 1 << 30
	live.Ordinal = 1
	assert.Equal(t, "h100-sxm", Closest(live).Short)
	diffs := Diff(mustLookup(t, "h100-sxm"), live)
	fields := make([]string, len(diffs))
	for i, d := range diffs {
		fields[i] = d.Field
	}
	assert.Equal(t, []string{"name", "ordinal", "total_memory_bytes"}, fields)
	// 114 SMs at cc 9.0 is the PCIe part; a cc 9.0 with 140 SMs is still Hopper-class.
	live.SMCount = 114
	assert.Equal(t, "h100-pcie", Closest(live).Short)
	// vyre's synthetic RTX 5090 is never chosen.
	assert.Equal(t, "rtx5090-sm120", Closest(Blackwell5090Default()).Short)
	// A cc 8.7 part (Orin) goes to the nearest 8.x.
	orin := mustLookup(t, "a10")
	orin.Minor = 7
	orin.SMCount = 16
	assert.True(t, strings.HasPrefix(Closest(orin).Device.CC(), "8."))
	// Carveouts: nil and empty are equal; differing lists are reported.
	a, b := mustLookup(t, "h100"), mustLookup(t, "h100")
	a.SharedMemCarveoutsKiB, b.SharedMemCarveoutsKiB = nil, []int{}
	assert.Empty(t, Diff(a, b))
	b.SharedMemCarveoutsKiB = []int{0, 8}
	assert.Equal(t, []FieldDiff{{Field: "shared_mem_carveouts_kib", A: "[]", B: "[0 8]"}}, Diff(a, b))
}
