#!/usr/bin/env python3
"""Record the CUDA driver's occupancy answers on the live GPU.

Loads a few PTX kernels (JIT-compiled by the driver, no toolkit needed),
reads the device attributes gpuplan's Device holds, and asks the driver
(cuOccupancyMaxActiveBlocksPerMultiprocessor and
cuOccupancyMaxPotentialBlockSize) for a grid of block sizes, dynamic shared
memory sizes, carveout preferences and opt-in settings. The JSON it prints is
stored under occupancy/testdata/ and replayed against the exact model by
TestExactModelMatchesDriver.

usage: python3 driver_check.py > driver_<gpu>.json
"""
import ctypes as C
import json
import sys

cu = C.CDLL("libcuda.so.1")


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what} failed with CUresult {rc}")


check(cu.cuInit(0), "cuInit")
dev = C.c_int()
check(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
ctx = C.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def attr(a):
    v = C.c_int()
    check(cu.cuDeviceGetAttribute(C.byref(v), a, dev), f"cuDeviceGetAttribute({a})")
    return v.value


name = C.create_string_buffer(256)
check(cu.cuDeviceGetName(name, 256, dev), "cuDeviceGetName")
total = C.c_size_t()
check(cu.cuDeviceTotalMem_v2(C.byref(total), dev), "cuDeviceTotalMem")
device = {
    "name": name.value.decode(), "cc_major": attr(75), "cc_minor": attr(76),
    "sm_count": attr(16), "warp_size": attr(10), "max_threads_per_block": attr(1),
    "max_threads_per_sm": attr(39), "max_blocks_per_sm": attr(106),
    "registers_per_sm": attr(82), "registers_per_block": attr(12),
    "shared_mem_per_sm": attr(81), "shared_mem_per_block": attr(8),
    "shared_mem_per_block_optin": attr(97), "reserved_shared_mem_per_block": attr(111),
    "l2_bytes": attr(38), "total_memory_bytes": total.value, "memory_bus_bits": attr(37),
    "memory_clock_khz": attr(36), "cooperative_launch": attr(95) == 1,
    "concurrent_kernels": attr(31) == 1, "async_engines": attr(40),
    "max_grid_dim": [attr(5), attr(6), attr(7)], "max_block_dim": [attr(2), attr(3), attr(4)],
}


def ptx(nloads, static_smem):
    regs = "\n".join(f"  ld.volatile.global.f32 %f{i}, [%rd2+{4 * i}];" for i in range(nloads))
    acc = [f"  mul.f32 %g0, %f0, %f{nloads - 1};"]
    for i in range(1, nloads):
        acc.append(f"  fma.rn.f32 %g{i}, %g{i - 1}, %f{i}, %f{nloads - 1 - i};")
    smem = f"  .shared .align 16 .b8 sbuf[{static_smem}];\n" if static_smem else ""
    use = "  st.shared.f32 [sbuf], %g{0};\n  bar.sync 0;\n  ld.shared.f32 %g{0}, [sbuf+4];\n".format(nloads - 1) if static_smem else ""
    return f""".version 6.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 p) {{
  .reg .b64 %rd<4>;
  .reg .f32 %f<{nloads + 1}>;
  .reg .f32 %g<{nloads + 1}>;
{smem}  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
{regs}
{chr(10).join(acc)}
{use}  st.global.f32 [%rd2], %g{nloads - 1};
  ret;
}}
"""


kernels, funcs = [], []
for nloads, static in [(2, 0), (24, 0), (60, 0), (120, 0), (250, 0), (2, 4000), (60, 12000)]:
    mod = C.c_void_p()
    src = ptx(nloads, static).encode() + b"\0"
    check(cu.cuModuleLoadData(C.byref(mod), src), f"cuModuleLoadData({nloads},{static})")
    fn = C.c_void_p()
    check(cu.cuModuleGetFunction(C.byref(fn), mod, b"k"), "cuModuleGetFunction")
    v = C.c_int()
    check(cu.cuFuncGetAttribute(C.byref(v), 4, fn), "NUM_REGS")
    regs = v.value
    check(cu.cuFuncGetAttribute(C.byref(v), 1, fn), "SHARED_SIZE_BYTES")
    kernels.append({"registers_per_thread": regs, "static_shared_bytes": v.value})
    funcs.append(fn)

blocks = [1, 32, 33, 64, 96, 100, 128, 160, 192, 224, 256, 257, 288, 320, 384, 512, 544, 640, 768, 896, 992, 1000, 1024]
dyns = [0, 1, 1000, 20000, 40000, 50000, 100000, 200000]
carveouts = [-1, 0, 10, 25, 50, 100]
cases, mpbs = [], []
for ki, fn in enumerate(funcs):
    static = kernels[ki]["static_shared_bytes"]
    for opt_in in (False, True):
        maxdyn = (device["shared_mem_per_block_optin"] if opt_in else device["shared_mem_per_block"]) - static
        check(cu.cuFuncSetAttribute(fn, 8, maxdyn), "MAX_DYNAMIC_SHARED_SIZE_BYTES")
        for carve in carveouts:
            check(cu.cuFuncSetAttribute(fn, 9, carve), "PREFERRED_SHARED_MEMORY_CARVEOUT")
            for dyn in dyns:
                if dyn > maxdyn:
                    continue
                for b in blocks:
                    n = C.c_int()
                    rc = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(C.byref(n), fn, b, C.c_size_t(dyn))
                    cases.append([ki, int(opt_in), carve, dyn, b, n.value if rc == 0 else -rc])
                mg, bs = C.c_int(), C.c_int()
                rc = cu.cuOccupancyMaxPotentialBlockSize(C.byref(mg), C.byref(bs), fn, None, C.c_size_t(dyn), 0)
                mpbs.append([ki, int(opt_in), carve, dyn, bs.value if rc == 0 else -rc, mg.value])

json.dump({"device": device, "kernels": kernels,
           "cases_columns": ["kernel", "opt_in", "carveout", "dynamic_shared_bytes", "block_size", "driver_blocks_per_sm"],
           "cases": cases,
           "mpbs_columns": ["kernel", "opt_in", "carveout", "dynamic_shared_bytes", "block_size", "min_grid_size"],
           "mpbs": mpbs}, sys.stdout, separators=(",", ":"))
print()
