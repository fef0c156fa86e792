//go:build cuda

package executor

// #include <stdlib.h>
// #include "shim_cuda.h"
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// linkLogBytes is the size of each JIT link log buffer.
const linkLogBytes = 64 << 10

// eventPtr and streamPtr return the driver handles inside cu's types.
func eventPtr(e cu.Event) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&e)) }

// StreamWaitEvent is cuStreamWaitEvent.
func (b *cudaBackend) StreamWaitEvent(s StreamRef, e EventRef) error {
	return b.do(func() error {
		st, err := b.stream("cuStreamWaitEvent", s)
		if err != nil {
			return err
		}
		ev, err := b.event("cuStreamWaitEvent", e)
		if err != nil {
			return err
		}
		return newDriverError("cuStreamWaitEvent", int(C.gp_stream_wait_event(unsafe.Pointer(st.C()), eventPtr(ev))), "")
	})
}

// LinkModule links the inputs with the driver's JIT linker and loads the
// image. Each input is passed NUL-terminated, as the linker reads PTX.
func (b *cudaBackend) LinkModule(inputs []LinkInput, opts LinkOptions) (ModuleRef, string, error) {
	var r ModuleRef
	var info string
	err := b.do(func() error {
		n := len(inputs)
		data := C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0))))
		names := C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0))))
		sizes := make([]C.ulonglong, n)
		logs := C.malloc(2 * linkLogBytes)
		defer C.free(data)
		defer C.free(names)
		defer C.free(logs)
		ds := unsafe.Slice((**C.char)(data), n)
		ns := unsafe.Slice((**C.char)(names), n)
		for i, in := range inputs {
			ds[i] = (*C.char)(C.CBytes(append(append([]byte(nil), in.PTX...), 0)))
			ns[i] = C.CString(in.Name)
			sizes[i] = C.ulonglong(len(in.PTX) + 1)
		}
		defer func() {
			for i := range inputs {
				C.free(unsafe.Pointer(ds[i]))
				C.free(unsafe.Pointer(ns[i]))
			}
		}()
		infoBuf, errBuf := (*C.char)(logs), (*C.char)(unsafe.Add(logs, linkLogBytes))
		*infoBuf, *errBuf = 0, 0
		var mod unsafe.Pointer
		var step, input C.int
		code := int(C.gp_link(C.int(n), (**C.char)(data), &sizes[0], (**C.char)(names), C.uint(opts.MaxRegisters), infoBuf, linkLogBytes, errBuf, linkLogBytes, &mod, &step, &input))
		info = C.GoString(infoBuf)
		if code != 0 {
			return linkFailure(inputs, code, int(step), int(input), C.GoString(errBuf))
		}
		r = ModuleRef(b.handle())
		b.mods[r] = *(*cu.Module)(unsafe.Pointer(&mod))
		return nil
	})
	return r, info, err
}

// linkFailure builds the error of a failed link step.
func linkFailure(inputs []LinkInput, code, step, input int, log string) error {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Name
	}
	call := [...]string{"cuLinkCreate", "cuLinkCreate", "cuLinkAddData", "cuLinkComplete", "cuModuleLoadData"}[min(max(step, 0), 4)]
	if step == 2 && input >= 0 && input < len(names) {
		log = fmt.Sprintf("input %s: %s", names[input], log)
	}
	return &LinkError{Inputs: names, Code: code, Call: call, Log: log}
}

// GraphCreate is cuGraphCreate.
func (b *cudaBackend) GraphCreate() (GraphRef, error) {
	var r GraphRef
	err := b.do(func() error {
		var g unsafe.Pointer
		if code := int(C.gp_graph_create(&g)); code != 0 {
			return newDriverError("cuGraphCreate", code, "")
		}
		r = GraphRef(b.handle())
		b.graphs[r] = g
		return nil
	})
	return r, err
}

// GraphAddKernel is cuGraphAddKernelNode, with programmatic edges through
// cuGraphAddDependencies_v2.
func (b *cudaBackend) GraphAddKernel(g GraphRef, f FuncRef, cfg LaunchConfig, args []uint64, deps []GraphEdge) (GraphNodeRef, error) {
	var r GraphNodeRef
	err := b.do(func() error {
		gp, ok := b.graphs[g]
		if !ok {
			return newDriverError("cuGraphAddKernelNode", 400, "unknown graph")
		}
		fn, err := b.fn("cuGraphAddKernelNode", f)
		if err != nil {
			return err
		}
		nd := len(deps)
		mem := C.malloc(C.size_t(max(nd, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))+1))
		defer C.free(mem)
		ptrs := unsafe.Slice((*unsafe.Pointer)(mem), max(nd, 1))
		prog := unsafe.Slice((*C.uchar)(unsafe.Add(mem, uintptr(max(nd, 1))*unsafe.Sizeof(uintptr(0)))), max(nd, 1))
		for i, d := range deps {
			node, ok := b.nodes[d.From]
			if !ok {
				return newDriverError("cuGraphAddKernelNode", 400, "unknown dependency node")
			}
			ptrs[i] = node
			prog[i] = 0
			if d.Programmatic {
				prog[i] = 1
			}
		}
		var vals *C.ulonglong
		if len(args) > 0 {
			vals = (*C.ulonglong)(unsafe.Pointer(&args[0]))
		}
		var node unsafe.Pointer
		code := int(C.gp_graph_add_kernel(gp, funcPtr(fn), C.uint(cfg.Grid[0]), C.uint(cfg.Grid[1]), C.uint(cfg.Grid[2]),
			C.uint(cfg.Block[0]), C.uint(cfg.Block[1]), C.uint(cfg.Block[2]), C.uint(cfg.DynamicSharedBytes),
			vals, C.int(len(args)), (*unsafe.Pointer)(mem), (*C.uchar)(&prog[0]), C.int(nd), &node))
		if code == cuErrNotSupported {
			return newDriverError("cuGraphAddDependencies_v2", code, "programmatic graph edges need a CUDA 12.3 or newer driver")
		}
		if code != 0 {
			return newDriverError("cuGraphAddKernelNode", code, fmt.Sprintf("grid %v, block %v", cfg.Grid, cfg.Block))
		}
		r = GraphNodeRef(b.handle())
		b.nodes[r] = node
		b.graphNodes[g] = append(b.graphNodes[g], r)
		return nil
	})
	return r, err
}

// GraphInstantiate is cuGraphInstantiateWithFlags.
func (b *cudaBackend) GraphInstantiate(g GraphRef) (GraphExecRef, error) {
	var r GraphExecRef
	err := b.do(func() error {
		gp, ok := b.graphs[g]
		if !ok {
			return newDriverError("cuGraphInstantiate", 400, "unknown graph")
		}
		var exec unsafe.Pointer
		if code := int(C.gp_graph_instantiate(&exec, gp)); code != 0 {
			return newDriverError("cuGraphInstantiate", code, "")
		}
		r = GraphExecRef(b.handle())
		b.execs[r] = exec
		return nil
	})
	return r, err
}

// GraphLaunch is cuGraphLaunch.
func (b *cudaBackend) GraphLaunch(e GraphExecRef, s StreamRef) error {
	return b.do(func() error {
		exec, ok := b.execs[e]
		if !ok {
			return newDriverError("cuGraphLaunch", 400, "unknown graph exec")
		}
		st, err := b.stream("cuGraphLaunch", s)
		if err != nil {
			return err
		}
		return newDriverError("cuGraphLaunch", int(C.gp_graph_launch(exec, unsafe.Pointer(st.C()))), "")
	})
}

// GraphExecDestroy is cuGraphExecDestroy.
func (b *cudaBackend) GraphExecDestroy(e GraphExecRef) error {
	return b.do(func() error {
		exec, ok := b.execs[e]
		if !ok {
			return newDriverError("cuGraphExecDestroy", 400, "unknown graph exec")
		}
		delete(b.execs, e)
		return newDriverError("cuGraphExecDestroy", int(C.gp_graph_exec_destroy(exec)), "")
	})
}

// GraphDestroy is cuGraphDestroy; the graph's nodes go with it.
func (b *cudaBackend) GraphDestroy(g GraphRef) error {
	return b.do(func() error {
		gp, ok := b.graphs[g]
		if !ok {
			return newDriverError("cuGraphDestroy", 400, "unknown graph")
		}
		delete(b.graphs, g)
		for _, n := range b.graphNodes[g] {
			delete(b.nodes, n)
		}
		delete(b.graphNodes, g)
		return newDriverError("cuGraphDestroy", int(C.gp_graph_destroy(gp)), "")
	})
}

// freeGraphs destroys the instantiated graphs and the graphs the backend
// still holds, handing each error to keep.
func (b *cudaBackend) freeGraphs(keep func(error)) {
	for e, exec := range b.execs {
		keep(newDriverError("cuGraphExecDestroy", int(C.gp_graph_exec_destroy(exec)), "at close"))
		delete(b.execs, e)
	}
	for g, gp := range b.graphs {
		keep(newDriverError("cuGraphDestroy", int(C.gp_graph_destroy(gp)), "at close"))
		delete(b.graphs, g)
		delete(b.graphNodes, g)
	}
	for n := range b.nodes {
		delete(b.nodes, n)
	}
}
