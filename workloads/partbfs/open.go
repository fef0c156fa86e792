package partbfs

import (
	"errors"
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
)

// Opener opens the devices a partitioned traversal runs on. Its fields
// are the driver calls it makes, so tests can stand in for the driver.
type Opener struct {
	// Count returns the number of devices present.
	Count func() (int, error)
	// Open opens one executor on a device ordinal.
	Open func(ordinal int) (*executor.Executor, error)
	// DriverVersion returns the driver version a device reports.
	DriverVersion func(ordinal int) string
	// Comm creates the communicator over one executor per device.
	Comm func(xs []*executor.Executor) (nccl.Collectives, error)
	// UniqueID makes the id of a communicator whose ranks run in
	// separate processes (on rank 0, which hosts its bootstrap).
	UniqueID func() (nccl.UniqueID, error)
	// Rank opens one rank of the communicator of id on x.
	Rank func(x *executor.Executor, id nccl.UniqueID, rank, ranks int) (nccl.RankCollectives, error)
}

// DefaultOpener opens CUDA devices (executor.Open) with NCCL between them
// (nccl.Open; with one process per device, nccl.NewUniqueID and
// nccl.OpenRank with the default timeouts). The driver version is the
// process's (cuDriverGetVersion).
func DefaultOpener() Opener {
	return Opener{
		Count:         executor.DeviceCount,
		Open:          func(ordinal int) (*executor.Executor, error) { return executor.Open(ordinal, executor.Options{}) },
		DriverVersion: func(int) string { return executor.DriverVersion() },
		Comm: func(xs []*executor.Executor) (nccl.Collectives, error) {
			c, err := nccl.Open(xs, nccl.Options{})
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		UniqueID: func() (nccl.UniqueID, error) { return nccl.NewUniqueID(nccl.Options{}) },
		Rank: func(x *executor.Executor, id nccl.UniqueID, rank, ranks int) (nccl.RankCollectives, error) {
			c, err := nccl.OpenRank(x, id, rank, ranks, nccl.Options{})
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	}
}

// Devices are the executors of a partitioned traversal, one per part, and
// the exchange between them.
type Devices struct {
	// Executors holds one executor per part; in the one-device
	// simulation every entry is the same executor.
	Executors []*executor.Executor
	// Transport exchanges between the parts.
	Transport nccl.Collectives
	// Simulated is true when every part runs on one device.
	Simulated bool
	// Driver is the driver version every device reported.
	Driver string
	opened []*executor.Executor
}

// Close closes the transport and every executor it opened.
func (d *Devices) Close() error {
	var errs []error
	if d.Transport != nil {
		errs = append(errs, d.Transport.Close())
	}
	for _, x := range d.opened {
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}

// TooFewDevicesError: more devices were asked for than are present.
type TooFewDevicesError struct {
	Asked, Present int
}

// Error gives both counts and ends with a "Fix:" sentence.
func (e *TooFewDevicesError) Error() string {
	return fmt.Sprintf("partitioned BFS: %d devices asked for, %d present (CUDA_VISIBLE_DEVICES limits what the driver shows). "+
		"Fix: ask for at most %d devices, or run the %d partitions on one device with --simulate-devices %d", e.Asked, e.Present, e.Present, e.Asked, e.Asked)
}

// DriverMismatchError: two devices report different driver versions.
type DriverMismatchError struct {
	Device             int
	Version, First     string
	FirstDevice, Asked int
}

// Error names both devices and versions and ends with a "Fix:" sentence.
func (e *DriverMismatchError) Error() string {
	return fmt.Sprintf("partitioned BFS: device %d reports driver %q but device %d reports %q; the %d devices must run one driver. "+
		"Fix: install one NVIDIA driver version for every device (nvidia-smi shows each device's) and restart the process", e.Device, e.Version, e.FirstDevice, e.First, e.Asked)
}

// OpenDevices opens devices 0..p-1, one executor each, checks that they
// report one driver version and creates the communicator. More devices
// than present is a *TooFewDevicesError, before anything is opened.
func (o Opener) OpenDevices(p int) (*Devices, error) {
	if p < 1 || p > MaxParts {
		return nil, fmt.Errorf("partitioned BFS over %d devices: use 1 to %d. Fix: pass --devices within that range", p, MaxParts)
	}
	n, err := o.Count()
	if err != nil {
		return nil, err
	}
	if n < p {
		return nil, &TooFewDevicesError{Asked: p, Present: n}
	}
	d := &Devices{}
	ok := false
	defer func() {
		if !ok {
			_ = d.Close()
		}
	}()
	for i := range p {
		v := o.DriverVersion(i)
		if i == 0 {
			d.Driver = v
		} else if v != d.Driver {
			return nil, &DriverMismatchError{Device: i, Version: v, First: d.Driver, FirstDevice: 0, Asked: p}
		}
		x, err := o.Open(i)
		if err != nil {
			return nil, fmt.Errorf("partitioned BFS: opening device %d of %d: %w", i, p, err)
		}
		d.opened = append(d.opened, x)
	}
	d.Executors = append([]*executor.Executor(nil), d.opened...)
	if d.Transport, err = o.Comm(d.Executors); err != nil {
		return nil, err
	}
	ok = true
	return d, nil
}

// Simulate opens device ordinal once and runs p parts on it, exchanging
// with device copies (DeviceCopy).
func (o Opener) Simulate(ordinal, p int) (*Devices, error) {
	if p < 1 || p > MaxParts {
		return nil, fmt.Errorf("partitioned BFS simulating %d devices: use 1 to %d. Fix: pass --simulate-devices within that range", p, MaxParts)
	}
	x, err := o.Open(ordinal)
	if err != nil {
		return nil, err
	}
	return SimulatedDevices(x, p, o.DriverVersion(ordinal), true)
}

// SimulatedDevices runs p parts on x with the device-copy exchange; with
// own set, Close closes x too.
func SimulatedDevices(x *executor.Executor, p int, driver string, own bool) (*Devices, error) {
	d := &Devices{Simulated: true, Driver: driver}
	if own {
		d.opened = []*executor.Executor{x}
	}
	tr, err := NewDeviceCopy(x, p)
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	d.Transport = tr
	for range p {
		d.Executors = append(d.Executors, x)
	}
	return d, nil
}
