package decode_test

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/examples/decode"
	"github.com/gpuplan/gpuplan/examples/internal/extest"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// model is a decode step's inputs, as float64.
type model struct {
	layers, hidden, inter int
	x, gain, up, down     []float64
}

func loadModel(t *testing.T, p *wavedag.Program, layers, hidden, inter int) model {
	t.Helper()
	f64 := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, f := range v {
			out[i] = float64(f)
		}
		return out
	}
	bf := func(v []uint16) []float64 {
		out := make([]float64, len(v))
		for i, h := range v {
			out[i] = float64(wavedag.BF16Float(h))
		}
		return out
	}
	m := model{layers: layers, hidden: hidden, inter: inter,
		x:    f64(extest.F32s(extest.Initial(t, p, "x"))),
		gain: f64(extest.F32s(extest.Initial(t, p, "gain"))),
		up:   bf(extest.U16s(extest.Initial(t, p, "w_up"))),
		down: bf(extest.U16s(extest.Initial(t, p, "w_down"))),
	}
	require.Len(t, m.x, hidden)
	require.Len(t, m.gain, layers*hidden)
	require.Len(t, m.up, layers*inter*hidden)
	require.Len(t, m.down, layers*hidden*inter)
	return m
}

// forward is the whole step in float64, straight from the math.
func (m model) forward() []float64 {
	H, I := m.hidden, m.inter
	x := append([]float64(nil), m.x...)
	xn, h, d := make([]float64, H), make([]float64, I), make([]float64, H)
	for l := range m.layers {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(H)+float64(decode.Eps))
		for i := range xn {
			xn[i] = x[i] * r * m.gain[l*H+i]
		}
		for i := range h {
			var acc float64
			for k := range H {
				acc += m.up[(l*I+i)*H+k] * xn[k]
			}
			h[i] = acc / (1 + math.Exp(-acc)) // silu
		}
		for i := range d {
			var acc float64
			for k := range I {
				acc += m.down[(l*H+i)*I+k] * h[k]
			}
			d[i] = acc
		}
		for i := range x {
			x[i] += d[i]
		}
	}
	return x
}

// f32 is an fp32 operation's rounding.
func f32(v float64) float64 { return float64(float32(v)) }

// fma32 is fmaf: the float64 FMA of float32 operands rounded to float32
// (exact but for a double rounding in rare ties).
func fma32(a, b, c float64) float64 { return f32(math.FMA(a, b, c)) }

// warpSum adds 32 lanes' values in the order of the kernels' xor-shuffle
// reduction.
func warpSum(v []float64) float64 {
	v = append([]float64(nil), v...)
	for o := 16; o > 0; o >>= 1 {
		next := make([]float64, 32)
		for l := range 32 {
			next[l] = f32(v[l] + v[l^o])
		}
		v = next
	}
	return v[0]
}

// deviceForward is the step as the kernels compute it with Block threads:
// fp32 activations, fp32 FMA chains per lane over the 16-byte chunks c =
// lane, lane + 32, ..., the shuffle reduction, warp sums in warp order.
func (m model) deviceForward() []float64 {
	H, I := m.hidden, m.inter
	x := make([]float64, H)
	for i, v := range m.x {
		x[i] = f32(v)
	}
	dot := func(w []float64, in []float64) float64 {
		lanes := make([]float64, 32)
		for c := 0; c < len(in)/8; c++ {
			l := c % 32
			for j := range 8 {
				lanes[l] = fma32(w[8*c+j], in[8*c+j], lanes[l])
			}
		}
		return warpSum(lanes)
	}
	xn, h, d := make([]float64, H), make([]float64, I), make([]float64, H)
	for l := range m.layers {
		warps := make([]float64, decode.Block/32)
		for wp := range warps {
			lanes := make([]float64, 32)
			for ln := range 32 {
				for i := wp*32 + ln; i < H; i += decode.Block {
					lanes[ln] = fma32(x[i], x[i], lanes[ln])
				}
			}
			warps[wp] = warpSum(lanes)
		}
		var total float64
		for _, s := range warps {
			total = f32(total + s)
		}
		r := f32(1 / math.Sqrt(f32(f32(total/float64(H))+float64(decode.Eps))))
		for i := range xn {
			xn[i] = f32(f32(x[i]*r) * f32(m.gain[l*H+i]))
		}
		for i := range h {
			v := dot(m.up[(l*I+i)*H:(l*I+i+1)*H], xn)
			h[i] = f32(v / f32(1+f32(math.Exp(-v))))
		}
		for i := range d {
			d[i] = dot(m.down[(l*H+i)*I:(l*H+i+1)*I], h)
		}
		for i := range x {
			x[i] = f32(x[i] + d[i])
		}
	}
	return x
}

func f32Bytes(v []float64) []byte {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return extest.F32Bytes(f)
}

// relL2 is ||got - want|| / ||want||.
func relL2(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

func TestReference(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		layers, hidden, inter int
	}{
		{"2x256x512", 2, 256, 512},
		{"1x8x16", 1, 8, 16},
		{"3x64x48", 3, 64, 48},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := decode.Workload(tc.layers, tc.hidden, tc.inter)
			require.NoError(t, err)
			p, outs := extest.Run(t, "decode.json", data, extest.Files(decode.ModulePath, decode.PTX()), decode.Funcs())
			require.Equal(t, tc.layers*decode.WavesPerLayer, p.Waves())
			m := loadModel(t, p, tc.layers, tc.hidden, tc.inter)
			want := m.forward()
			o := p.Workload.Outputs[0]
			require.Equal(t, "x", o.Buffer)
			require.Equal(t, decode.Tolerance, o.OutputTolerance())
			require.NoError(t, wavedag.Compare(o, outs[0], f32Bytes(want)))
			// The reference rounds each wave's output to f32 only: it is
			// far closer to the float64 pass than the tolerance.
			got := extest.F32s(outs[0])
			gf := make([]float64, len(got))
			for i, v := range got {
				gf[i] = float64(v)
			}
			require.Less(t, relL2(gf, want), 1e-5)
			// The device's fp32 order stays well inside the tolerance too.
			dev := m.deviceForward()
			require.NoError(t, wavedag.Compare(o, f32Bytes(dev), f32Bytes(want)))
			t.Logf("relative L2 error against float64: reference %.3g, fp32 device order %.3g; rms(x) %.3g", relL2(gf, want), relL2(dev, want), rms(want))
		})
	}
}

func rms(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}

// TestDefaultSize checks the default step's scale and the fp32 device
// order's error at full size: about 30 s and 5 GB of memory, so only with
// GPUPLAN_FULL_EXAMPLES=1.
func TestDefaultSize(t *testing.T) {
	if os.Getenv("GPUPLAN_FULL_EXAMPLES") == "" {
		t.Skip("set GPUPLAN_FULL_EXAMPLES=1 to run the full-size step")
	}
	data, err := decode.Workload(decode.DefaultLayers, decode.DefaultHidden, decode.DefaultIntermediate)
	require.NoError(t, err)
	p, err := wavedag.Parse("decode.json", data, extest.Files(decode.ModulePath, decode.PTX()), wavedag.LoadOptions{})
	require.NoError(t, err)
	m := loadModel(t, p, decode.DefaultLayers, decode.DefaultHidden, decode.DefaultIntermediate)
	want, dev := m.forward(), m.deviceForward()
	require.NoError(t, wavedag.Compare(p.Workload.Outputs[0], f32Bytes(dev), f32Bytes(want)))
	t.Logf("rms(x): initial %.3g, after %d layers %.3g; fp32 device order's relative L2 error %.3g", rms(m.x), m.layers, rms(want), relL2(dev, want))
	require.Less(t, rms(want), 10.0)
}

func TestCommittedJSON(t *testing.T) {
	committed, err := os.ReadFile("decode.json")
	require.NoError(t, err)
	want, err := decode.Workload(decode.DefaultLayers, decode.DefaultHidden, decode.DefaultIntermediate)
	require.NoError(t, err)
	require.Equal(t, string(want), string(committed), "decode.json is stale. Fix: run go generate in examples/decode")
	p, err := wavedag.Load("decode.json", wavedag.LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, decode.DefaultLayers*decode.WavesPerLayer, p.Waves())
	for _, wv := range p.Workload.Waves {
		k := wv.Kernel
		require.Equal(t, uint64(decode.Block), *k.Block)
		if k.Function == "decode_gemv" {
			require.True(t, k.Prologue)
			require.Equal(t, uint64(64<<10), k.SharedBytes, "wave %d", *wv.ID)
		}
	}
}

// decode-small.json is the small step the sanitizer runs on a GPU.
func TestCommittedSmallJSON(t *testing.T) {
	committed, err := os.ReadFile("decode-small.json")
	require.NoError(t, err)
	want, err := decode.Workload(2, 256, 512)
	require.NoError(t, err)
	require.Equal(t, string(want), string(committed), "decode-small.json is stale. Fix: run go generate in examples/decode")
	p, err := wavedag.Load("decode-small.json", wavedag.LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, 2*decode.WavesPerLayer, p.Waves())
}

func TestDependencies(t *testing.T) {
	data, err := decode.Workload(3, 64, 128)
	require.NoError(t, err)
	w, err := megakernel.DecodeWorkload("decode.json", data)
	require.NoError(t, err)
	type dep struct {
		before, after int
		tiles         string
	}
	var got []dep
	for i, d := range w.Dependencies {
		got = append(got, dep{int(*d.Before), int(*d.After), w.DependencyTiles(i).String()})
	}
	var want []dep
	for l := range 3 {
		b := 5 * l
		if l > 0 {
			want = append(want, dep{b - 1, b, "all"})
		}
		want = append(want, dep{b, b + 1, "all"}, dep{b + 1, b + 2, "same"}, dep{b + 2, b + 3, "all"}, dep{b + 3, b + 4, "same"})
	}
	require.Equal(t, want, got)
}

func TestWeightBytes(t *testing.T) {
	require.Equal(t, uint64(4*32*2048*4096+4*32*2048), decode.WeightBytes(32, 2048, 4096))
	require.Equal(t, uint64(1074003968), decode.WeightBytes(decode.DefaultLayers, decode.DefaultHidden, decode.DefaultIntermediate))
	require.Equal(t, uint64(0), decode.WeightBytes(-1, 2048, 4096))
}

func TestDeterministic(t *testing.T) {
	a, err := decode.Workload(4, 512, 1024)
	require.NoError(t, err)
	b, err := decode.Workload(4, 512, 1024)
	require.NoError(t, err)
	require.True(t, bytes.Equal(a, b))
}

func TestBadSizes(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		layers, hidden, inter int
		field                 string
	}{
		{"no layers", 0, 2048, 4096, "layers"},
		{"negative layers", -3, 2048, 4096, "layers"},
		{"too many layers", decode.MaxLayers + 1, 64, 64, "layers"},
		{"hidden zero", 1, 0, 4096, "hidden"},
		{"hidden odd", 1, 2047, 4096, "hidden"},
		{"hidden over shared", 1, 8192, 4096, "hidden"},
		{"intermediate zero", 1, 2048, 0, "intermediate"},
		{"intermediate not multiple", 1, 2048, 4104, "intermediate"},
		{"intermediate over shared", 1, 2048, 16384, "intermediate"},
		{"weights too large", 1024, 4096, 8192, "weights"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode.Workload(tc.layers, tc.hidden, tc.inter)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.field)
			require.Contains(t, err.Error(), "Fix:")
		})
	}
}

// TestLargestSizes checks that the largest sizes Validate takes also
// parse and plan: the shared memory bound is the workload's.
func TestLargestSizes(t *testing.T) {
	maxH := megakernel.MaxWaveSharedBytes / (2 * decode.RowsUp)
	maxH -= maxH % decode.RowsDown
	maxI := megakernel.MaxWaveSharedBytes / (2 * decode.RowsDown)
	maxI -= maxI % decode.RowsUp
	data, err := decode.Workload(1, maxH, maxI)
	require.NoError(t, err)
	_, err = wavedag.Parse("decode.json", data, extest.Files(decode.ModulePath, decode.PTX()), wavedag.LoadOptions{})
	require.NoError(t, err)
	_, err = decode.Workload(1, maxH+decode.RowsDown, maxI)
	require.ErrorContains(t, err, "hidden")
	_, err = decode.Workload(1, maxH, maxI+decode.RowsUp)
	require.ErrorContains(t, err, "intermediate")
}
