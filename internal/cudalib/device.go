//go:build cuda

package cudalib

/*
#include <cuda.h>
*/
import "C"

// pciBusIDLen is the buffer cuDeviceGetPCIBusId fills: "dddddddd:bb:dd.f"
// and its terminator need 17 bytes; the driver documents 13 as the least.
const pciBusIDLen = 32

// DriverVersion returns the CUDA version the installed driver supports,
// as 1000*major + 10*minor (cuDriverGetVersion: 12020 is CUDA 12.2).
func DriverVersion() (int, error) {
	var v C.int
	if r := C.cuDriverGetVersion(&v); r != C.CUDA_SUCCESS {
		return 0, driverError("cuDriverGetVersion", -1, r)
	}
	return int(v), nil
}

// DeviceUUID returns the 16 bytes of device ordinal's UUID
// (cuDeviceGetUuid), the identity nvidia-smi prints as GPU-<uuid>.
func DeviceUUID(ordinal int) ([16]byte, error) {
	var u C.CUuuid
	if r := C.cuDeviceGetUuid(&u, C.CUdevice(ordinal)); r != C.CUDA_SUCCESS {
		return [16]byte{}, driverError("cuDeviceGetUuid", ordinal, r)
	}
	var out [16]byte
	for i := range out {
		out[i] = byte(u.bytes[i])
	}
	return out, nil
}

// DevicePCIBusID returns device ordinal's PCI address as the driver
// formats it, domain:bus:device.function in hexadecimal
// (cuDeviceGetPCIBusId).
func DevicePCIBusID(ordinal int) (string, error) {
	var buf [pciBusIDLen]C.char
	if r := C.cuDeviceGetPCIBusId(&buf[0], C.int(len(buf)), C.CUdevice(ordinal)); r != C.CUDA_SUCCESS {
		return "", driverError("cuDeviceGetPCIBusId", ordinal, r)
	}
	return C.GoString(&buf[0]), nil
}

// driverError wraps a failed call's code with the driver's name for it.
func driverError(call string, ordinal int, r C.CUresult) error {
	e := &DriverError{Call: call, Ordinal: ordinal, Code: int(r)}
	var name *C.char
	if C.cuGetErrorName(r, &name) == C.CUDA_SUCCESS && name != nil {
		e.Name = C.GoString(name)
	}
	return e
}
