package executor

import (
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/ptxsym"
)

// LinkModule links PTX inputs as the driver's JIT linker would resolve
// them: each input must parse and carry a PTX version the fake driver
// loads, every .extern function must be defined once, with the declared
// prototype, and the entries of every input become the module's kernels
// (FakeConfig.Link, then FakeConfig.Kernels, give their Go functions). A
// refused link is a *LinkError whose log reads like the driver's.
func (f *Fake) LinkModule(inputs []LinkInput, _ LinkOptions) (ModuleRef, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuLinkComplete"); err != nil {
		return 0, "", err
	}
	names := make([]string, len(inputs))
	mods := make([]ptxsym.Named, len(inputs))
	for i, in := range inputs {
		names[i] = in.Name
		m, err := ptxsym.Parse(in.PTX)
		if err != nil {
			return 0, "", &LinkError{Inputs: names[:i+1], Code: cuErrInvalidPTX, Call: "cuLinkAddData", Log: fmt.Sprintf("ptxas fatal   : %s: %v", in.Name, err)}
		}
		if m.Version > f.cfg.MaxPTXVersion {
			return 0, "", &LinkError{Inputs: names[:i+1], Code: cuErrUnsupportedPTXVersion, Call: "cuLinkAddData",
				Log: fmt.Sprintf("ptxas fatal   : %s: PTX ISA %d.%d is newer than the driver's", in.Name, m.Version/10, m.Version%10)}
		}
		mods[i] = ptxsym.Named{Name: in.Name, Module: m}
	}
	if issues := ptxsym.CheckLink(mods); len(issues) > 0 {
		lines := make([]string, len(issues))
		for i, is := range issues {
			lines[i] = is.String()
		}
		return 0, "", &LinkError{Inputs: names, Code: cuErrNotFound, Call: "cuLinkComplete", Log: strings.Join(lines, "\n")}
	}
	var entries []string
	for _, m := range mods {
		for _, e := range m.Module.Entries {
			entries = append(entries, e.Name)
		}
	}
	kernels := map[string]FakeKernel{}
	if f.cfg.Link != nil {
		var err error
		if kernels, err = f.cfg.Link(inputs); err != nil {
			return 0, "", &LinkError{Inputs: names, Code: cuErrInvalidImage, Call: "cuModuleLoadData", Log: err.Error()}
		}
	}
	r := ModuleRef(f.handle())
	f.modules[r] = entries
	f.linked[r] = kernels
	return r, fmt.Sprintf("info    : linked %d inputs, %d entries", len(inputs), len(entries)), nil
}
