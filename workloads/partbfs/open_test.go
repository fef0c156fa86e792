package partbfs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
)

// fakeOpener stands in for the driver: present devices, a driver version
// per device, and the host-staged NCCL fake.
func fakeOpener(t *testing.T, present int, versions ...string) (Opener, *int) {
	opened := 0
	return Opener{
		Count: func() (int, error) { return present, nil },
		Open: func(int) (*executor.Executor, error) {
			opened++
			return fakeExecutor(t, 1<<28, 1), nil
		},
		DriverVersion: func(ordinal int) string {
			if ordinal < len(versions) {
				return versions[ordinal]
			}
			return "580.159.04"
		},
		Comm: func(xs []*executor.Executor) (nccl.Collectives, error) { return nccl.NewFake(xs) },
	}, &opened
}

func TestOpenDevicesRefusesMoreThanPresent(t *testing.T) {
	o, opened := fakeOpener(t, 2)
	_, err := o.OpenDevices(4)
	var tf *TooFewDevicesError
	require.ErrorAs(t, err, &tf)
	assert.Equal(t, TooFewDevicesError{Asked: 4, Present: 2}, *tf)
	assert.ErrorContains(t, err, "4 devices asked for, 2 present")
	assert.ErrorContains(t, err, "Fix: ask for at most 2 devices, or run the 4 partitions on one device with --simulate-devices 4")
	assert.Zero(t, *opened, "nothing is opened")
}

func TestOpenDevicesRefusesMismatchedDrivers(t *testing.T) {
	o, _ := fakeOpener(t, 4, "580.159.04", "580.159.04", "575.51.03")
	_, err := o.OpenDevices(3)
	var dm *DriverMismatchError
	require.ErrorAs(t, err, &dm)
	assert.Equal(t, 2, dm.Device)
	assert.ErrorContains(t, err, `device 2 reports driver "575.51.03" but device 0 reports "580.159.04"`)
	assert.ErrorContains(t, err, "Fix: install one NVIDIA driver version")
}

func TestOpenDevicesAndSimulate(t *testing.T) {
	o, opened := fakeOpener(t, 2)
	d, err := o.OpenDevices(2)
	require.NoError(t, err)
	assert.Len(t, d.Executors, 2)
	assert.NotSame(t, d.Executors[0], d.Executors[1])
	assert.False(t, d.Simulated)
	assert.Equal(t, "580.159.04", d.Driver)
	require.NoError(t, d.Close())
	assert.Equal(t, 2, *opened)

	s, err := o.Simulate(0, 4)
	require.NoError(t, err)
	assert.Len(t, s.Executors, 4)
	assert.Same(t, s.Executors[0], s.Executors[3])
	assert.True(t, s.Simulated)
	assert.Equal(t, 4, s.Transport.Ranks())
	require.NoError(t, s.Close())

	_, err = o.OpenDevices(0)
	assert.ErrorContains(t, err, "Fix:")
	_, err = o.Simulate(0, 65)
	assert.ErrorContains(t, err, "Fix:")
	o.Comm = func([]*executor.Executor) (nccl.Collectives, error) {
		return nil, &nccl.MissingError{Library: nccl.Library, Reason: "not found"}
	}
	_, err = o.OpenDevices(2)
	assert.True(t, errors.Is(err, nccl.ErrUnavailable))
}
