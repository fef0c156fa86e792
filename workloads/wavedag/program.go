package wavedag

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/ptxsym"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
)

// abiFuncs are the functions gpuplan defines for the wave functions: a
// module may declare them .extern (the header does).
var abiFuncs = []string{"gp_wait", "gp_sync", "gp_shared", "gp_threads"}

// Program is a workload whose waves run the user's kernels, ready to
// execute: the decoded workload, its plan, the user's PTX module and the
// contents of the buffers initialised from files.
type Program struct {
	// Source names the workload in messages (its path).
	Source   string
	Workload *megakernel.Workload
	Plan     *megakernel.WorkloadPlan
	// PTX is the user's relocatable module; ModuleName names it.
	PTX        []byte
	ModuleName string
	// Files holds the contents of file-initialised buffers, by buffer
	// index.
	Files map[int][]byte
	// Funcs are the distinct wave functions, by function id (first use in
	// wave order); waveFn is each wave's function id, by wave id.
	Funcs  []string
	waveFn []int
	// Device is the profile the plan was made against.
	Device occupancy.Device
	module *ptxsym.Module
}

// LoadOptions configure Load.
type LoadOptions struct {
	// Device is the profile to plan against (nil: the workload's device or
	// device_file).
	Device *occupancy.Device
	// MaxInputBytes bounds the workload, module and buffer files (0:
	// input.DefaultGraphLimit).
	MaxInputBytes int64
}

// Files reads a file a workload names (its module, a buffer's file, its
// device file) by the path the workload gives.
type Files func(path string) ([]byte, error)

// DirFiles reads the files a workload names relative to dir (absolute
// paths as they are), each at most limit bytes (0:
// input.DefaultGraphLimit).
func DirFiles(dir string, limit int64) Files {
	if limit == 0 {
		limit = input.DefaultGraphLimit
	}
	return func(path string) ([]byte, error) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := input.ReadFile(path, nil, limit)
		if err != nil {
			return nil, fmt.Errorf("%w (relative paths start at the workload file's directory)", err)
		}
		return b, nil
	}
}

// Load reads a workload file with a module, the module's PTX and the
// buffer files (paths relative to the workload file), plans it and checks
// every wave's function against the module.
func Load(path string, opts LoadOptions) (*Program, error) {
	data, err := input.ReadFile(path, nil, input.DefaultJSONLimit)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, DirFiles(filepath.Dir(path), opts.MaxInputBytes), opts)
}

// Parse decodes a workload with a module from data (source names it in
// messages), reads the files it names through files, plans it and checks
// every wave's function against the module.
func Parse(source string, data []byte, files Files, opts LoadOptions) (*Program, error) {
	w, err := megakernel.DecodeWorkload(source, data)
	if err != nil {
		return nil, err
	}
	if !w.HasModule() {
		return nil, &megakernel.WorkloadError{Source: source, Field: "module",
			Err: fmt.Errorf("the workload names no module, so its waves run no kernels. Fix: add \"module\": \"waves.ptx\" and a kernel to every wave (gpuplan plan plans it as it is)")}
	}
	read := func(field, path string) ([]byte, error) {
		b, err := files(path)
		if err != nil {
			return nil, &megakernel.WorkloadError{Source: source, Field: field, Err: err}
		}
		return b, nil
	}
	ptx, err := read("module", *w.Module)
	if err != nil {
		return nil, err
	}
	contents := map[int][]byte{}
	for i, b := range w.Buffers {
		if b.Init == nil || b.Init.Fill != megakernel.FillFile {
			continue
		}
		f := fmt.Sprintf("buffers[%d].init.path", i)
		if contents[i], err = read(f, b.Init.Path); err != nil {
			return nil, err
		}
		if uint64(len(contents[i])) != *b.Bytes {
			return nil, &megakernel.WorkloadError{Source: source, Field: f, Err: fmt.Errorf("%s holds %d bytes but buffer %s has %d. Fix: give the buffer the file's size, or write a file of exactly %d bytes", b.Init.Path, len(contents[i]), b.Name, *b.Bytes, *b.Bytes)}
		}
	}
	dev, profile, err := planDevice(w, source, opts, read)
	if err != nil {
		return nil, err
	}
	plan, err := megakernel.PlanWorkload(source, w, dev, profile, nil)
	if err != nil {
		return nil, err
	}
	p, err := NewProgram(source, w, plan, filepath.Base(*w.Module), ptx, contents)
	if err != nil {
		return nil, err
	}
	p.Device = dev
	return p, nil
}

// planDevice resolves the profile to plan against.
func planDevice(w *megakernel.Workload, source string, opts LoadOptions, read func(field, path string) ([]byte, error)) (occupancy.Device, string, error) {
	if opts.Device != nil {
		return *opts.Device, "", nil
	}
	if w.Device != nil {
		p, err := occupancy.LookupProfile(*w.Device)
		if err != nil {
			return occupancy.Device{}, "", &megakernel.WorkloadError{Source: source, Field: "device", Err: err}
		}
		return p.Device, p.Short, nil
	}
	data, err := read("device_file", *w.DeviceFile)
	if err != nil {
		return occupancy.Device{}, "", err
	}
	dev, err := occupancy.LoadDeviceJSON(*w.DeviceFile, data)
	if err != nil {
		return occupancy.Device{}, "", &megakernel.WorkloadError{Source: source, Field: "device_file", Err: err}
	}
	return dev, "", nil
}

// NewProgram checks a decoded and planned workload against its module:
// every wave's function must be a visible device function of the module
// with the wave signature, and every function the module declares .extern
// must be one gpuplan defines or the module itself does.
func NewProgram(source string, w *megakernel.Workload, plan *megakernel.WorkloadPlan, moduleName string, ptx []byte, files map[int][]byte) (*Program, error) {
	if w == nil || plan == nil || !w.HasModule() || plan.Tiles == nil {
		return nil, fmt.Errorf("%s: the workload was not decoded and planned with a module. Fix: use Load or megakernel.DecodeWorkload and PlanWorkload", source)
	}
	mod, err := ptxsym.Parse(ptx)
	if err != nil {
		return nil, &megakernel.WorkloadError{Source: source, Field: "module", Err: fmt.Errorf("%s: %w", moduleName, err)}
	}
	p := &Program{Source: source, Workload: w, Plan: plan, PTX: ptx, ModuleName: moduleName, Files: files, module: mod,
		waveFn: make([]int, len(w.Waves))}
	if err := p.checkModule(); err != nil {
		return nil, err
	}
	ids := map[string]int{}
	for _, wv := range w.Waves {
		name := wv.Kernel.Function
		id, ok := ids[name]
		if !ok {
			id = len(p.Funcs)
			ids[name] = id
			p.Funcs = append(p.Funcs, name)
		}
		p.waveFn[*wv.ID] = id
	}
	return p, nil
}

// checkModule checks the module's symbols before any link.
func (p *Program) checkModule() error {
	m := p.module
	wrap := func(field string, err error) error {
		return &megakernel.WorkloadError{Source: p.Source, Field: field, Err: err}
	}
	want := ptxsym.Func{Params: []ptxsym.Param{{Type: "b32"}, {Type: "b32"}, {Type: "b64"}}}
	for i, wv := range p.Workload.Waves {
		name := wv.Kernel.Function
		f, ok := m.Func(name)
		field := fmt.Sprintf("waves[%d].kernel.function", i)
		if !ok {
			return wrap(field, fmt.Errorf("wave %d's function %s is not a visible device function of %s (it defines %s). Fix: define it with GP_WAVE (extern \"C\" __device__) and compile with nvcc -rdc=true -ptx",
				*wv.ID, name, p.ModuleName, funcList(m.Funcs)))
		}
		want.Name = name
		if !ptxsym.SameSignature(f, want) {
			return wrap(field, fmt.Errorf("wave %d's function %s is %s in %s, but a wave function is %s. Fix: declare it GP_WAVE %s(unsigned int tile, unsigned int tiles, const unsigned long long *args)",
				*wv.ID, name, f.Signature(), p.ModuleName, want.Signature(), name))
		}
	}
	for _, e := range m.Externs {
		if slices.Contains(abiFuncs, e.Name) {
			continue
		}
		if _, ok := m.Func(e.Name); !ok {
			return wrap("module", fmt.Errorf("%s declares .extern function %s, which neither it nor gpuplan defines (gpuplan defines %s). Fix: define %s in the module, or include gpuplan_wave.h for the ABI functions",
				p.ModuleName, e.Name, strings.Join(abiFuncs, ", "), e.Name))
		}
	}
	for _, f := range m.Funcs {
		if strings.HasPrefix(f.Name, "gp_") {
			return wrap("module", fmt.Errorf("%s defines %s, a name reserved for gpuplan's runtime. Fix: rename it; names starting with gp_ belong to gpuplan", p.ModuleName, f.Name))
		}
	}
	for _, e := range m.Entries {
		if strings.HasPrefix(e.Name, "gp_") {
			return wrap("module", fmt.Errorf("%s defines kernel %s, a name reserved for gpuplan's runtime. Fix: rename it", p.ModuleName, e.Name))
		}
	}
	return nil
}

// funcList names at most 8 functions.
func funcList(fs []ptxsym.Func) string {
	if len(fs) == 0 {
		return "no visible device function"
	}
	names := make([]string, 0, 8)
	for i, f := range fs {
		if i == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(fs)-8))
			break
		}
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// Name returns the workload's name, or the file name of its source.
func (p *Program) Name() string {
	if p.Workload.Name != "" {
		return p.Workload.Name
	}
	return strings.TrimSuffix(filepath.Base(p.Source), filepath.Ext(p.Source))
}

// Prologue reports whether wave v has a prologue.
func (p *Program) Prologue(v int) bool { return p.wave(v).Kernel.Prologue }

// wave returns the workload wave with id v.
func (p *Program) wave(v int) *megakernel.WorkloadWave {
	for i := range p.Workload.Waves {
		if *p.Workload.Waves[i].ID == int64(v) {
			return &p.Workload.Waves[i]
		}
	}
	return nil
}

// Waves returns the number of waves.
func (p *Program) Waves() int { return len(p.Workload.Waves) }

// WaveLabel names wave v in messages: its id and name.
func (p *Program) WaveLabel(v int) string {
	if n := p.Plan.WaveNames[v]; n != "" {
		return fmt.Sprintf("wave %d (%s)", v, n)
	}
	return fmt.Sprintf("wave %d", v)
}
