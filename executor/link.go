package executor

import (
	"fmt"
	"strings"
)

// Link limits.
const (
	// MaxLinkInputs bounds the PTX inputs of one LinkModule.
	MaxLinkInputs = 64
	// MaxLinkLogShown is the most bytes of a link log a LinkError's message
	// shows; the whole log stays in LinkError.Log.
	MaxLinkLogShown = 4096
	// MinLinkRegisters and MaxLinkRegisters bound LinkOptions.MaxRegisters
	// (besides 0, no cap).
	MinLinkRegisters = 16
	MaxLinkRegisters = 255
)

// linkKeyDomain separates the cache keys of linked modules from those of
// single PTX modules.
const linkKeyDomain = "gpuplan.cuda.module-cache.linked-ptx.v1"

// LinkError is a JIT link the driver refused, for example an undefined or
// mismatched function. Log is the linker's error log, which names them.
type LinkError struct {
	// Inputs names the linked inputs.
	Inputs []string
	// Code is the CUresult of the failed step.
	Code int
	// Call is the driver call that failed (cuLinkAddData for a PTX that
	// does not compile, cuLinkComplete for a symbol that does not resolve).
	Call string
	// Log is the linker's error log.
	Log string
}

// Error names the inputs, the failed call and the log, and ends with a
// "Fix:" sentence.
func (e *LinkError) Error() string {
	log := strings.TrimSpace(e.Log)
	if len(log) > MaxLinkLogShown {
		log = log[:MaxLinkLogShown] + fmt.Sprintf(" ... (%d more bytes)", len(e.Log)-MaxLinkLogShown)
	}
	if log == "" {
		log = "(the linker wrote no log)"
	}
	return fmt.Sprintf("JIT link of %s failed in %s (%s): %s. Fix: define every function the log names, with the signature its callers declare, in one of the inputs",
		strings.Join(e.Inputs, ", "), e.Call, CUResultName(e.Code), log)
}

// linkKey hashes the inputs of a link, names and PTX, for one compute
// capability.
func linkKey(major, minor int, inputs []LinkInput, opts LinkOptions) ModuleKey {
	parts := make([][]byte, 0, 2*len(inputs)+1)
	for _, in := range inputs {
		parts = append(parts, []byte(in.Name), in.PTX)
	}
	if opts.MaxRegisters > 0 {
		parts = append(parts, fmt.Appendf(nil, "max-registers=%d", opts.MaxRegisters))
	}
	return moduleKey(linkKeyDomain, major, minor, parts...)
}

// LinkModule JIT-links relocatable PTX inputs (nvcc -rdc=true -ptx, or PTX
// generated at run time) into one module and loads it, or returns the
// cached module linked from the same inputs. No compiler is needed: the
// driver's linker compiles each input and resolves the functions one input
// declares .extern and another defines. A failed link is a *LinkError with
// the linker's log. Module.LinkLog returns the information log of a
// successful link.
func (x *Executor) LinkModule(inputs ...LinkInput) (*Module, error) {
	return x.LinkModuleWith(LinkOptions{}, inputs...)
}

// LinkModuleWith is LinkModule with the link's options; a MaxRegisters
// outside MinLinkRegisters..MaxLinkRegisters (besides 0) is refused.
func (x *Executor) LinkModuleWith(opts LinkOptions, inputs ...LinkInput) (*Module, error) {
	if len(inputs) == 0 || len(inputs) > MaxLinkInputs {
		return nil, invalidArg("link inputs", fmt.Sprintf("Fix: pass 1 to %d PTX inputs.", MaxLinkInputs), "%d inputs", len(inputs))
	}
	if r := opts.MaxRegisters; r != 0 && (r < MinLinkRegisters || r > MaxLinkRegisters) {
		return nil, invalidArg("link option MaxRegisters", fmt.Sprintf("Fix: use 0 for no cap, or %d to %d.", MinLinkRegisters, MaxLinkRegisters), "is %d", r)
	}
	for i, in := range inputs {
		if len(in.PTX) == 0 {
			return nil, invalidArg(fmt.Sprintf("link input %d (%s)", i, in.Name), "Fix: pass the PTX text of each input.", "is empty")
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	return x.cachedModuleLocked(linkKey(x.dev.Major, x.dev.Minor, inputs, opts), func() (ModuleRef, string, error) { return x.b.LinkModule(inputs, opts) })
}

// LinkLog returns the linker's information log of a module LinkModule
// made ("" for a module loaded from one PTX).
func (m *Module) LinkLog() string { return m.linkLog }
