package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
)

// armPlanned is --arm's default: the arm the megakernel topology plan
// picks from a measured profile.
const armPlanned = "planned"

// methodGPU is the method the output names for --gpu.
const methodGPU = "gpu"

// gpuRebuild is what --gpu adds to the output of "gpuplan egraph rebuild".
type gpuRebuild struct {
	Arm string `json:"arm"`
	// Planned is true when the arm came from the topology plan, whose
	// topology is Topology.
	Planned  bool    `json:"planned"`
	Topology string  `json:"topology,omitempty"`
	Device   string  `json:"device"`
	DeviceMS float64 `json:"device_ms"`
	Launches uint64  `json:"launches"`
}

// checkGPUFlags refuses --arm or --device without --gpu, --method with
// --gpu, and an unknown arm.
func (o *rebuildOptions) checkGPUFlags(set map[string]bool) error {
	switch {
	case !o.gpu && (set["arm"] || set["device"]):
		return usagef("gpuplan egraph rebuild: --arm and --device choose how the GPU runs. Fix: add --gpu")
	case o.gpu && set["method"]:
		return usagef("gpuplan egraph rebuild: --method chooses a CPU method, and --gpu runs the rounds on the GPU. Fix: pass one of them")
	case o.device < 0:
		return usagef("gpuplan egraph rebuild: --device %d is negative", o.device)
	}
	if o.arm == armPlanned {
		return nil
	}
	if _, err := rebuild.ParseArm(o.arm); err != nil {
		return usagef("gpuplan egraph rebuild: --arm %q is unknown. Fix: use planned, %s", o.arm, rebuildArmNames(rebuild.Arms(), ", "))
	}
	return nil
}

// rebuildOnGPU rebuilds g on the GPU: a resident session (with the
// incremental rounds when --arm names one of their arms), the arm (from
// the topology plan's measured profile of the full rounds unless --arm
// names one), one timed rebuild, and its partition and e-node table read
// back.
func rebuildOnGPU(o *rebuildOptions, g *egraph.Graph, out *rebuildOutput) (*egraph.RebuildResult, error) {
	x, err := o.open(o.device)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	s, err := rebuild.NewSession(x, g, o.file, rebuild.Config{Incremental: rebuild.Arm(o.arm).IsIncremental()})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	info := &gpuRebuild{Arm: o.arm, Device: x.Device().Name}
	if o.arm == armPlanned {
		plan, err := s.ProfileArm()
		if err != nil {
			return nil, err
		}
		info.Arm, info.Planned, info.Topology = string(plan.Arm), true, plan.Decision.Topology.String()
	}
	r, err := s.Run(rebuild.Arm(info.Arm))
	if err != nil {
		return nil, err
	}
	res, err := s.Output(r)
	if err != nil {
		return nil, err
	}
	info.DeviceMS, info.Launches = float64(r.DeviceNs)/1e6, r.Launches
	out.Method, out.GPU, out.RebuildMS = methodGPU, info, float64(r.WallNs)/1e6
	return res.Result, nil
}

// writeGPUTime prints the time line of --gpu.
func writeGPUTime(tw *tabwriter.Writer, o *rebuildOutput) {
	g := o.GPU
	how := "--arm"
	if g.Planned {
		how = "planned, topology " + g.Topology
	}
	fmt.Fprintf(tw, "time\t%.3f ms rebuild on the GPU (%s, %s), %.3f ms of device time, %d launches, %.1f M e-nodes/s\n",
		o.RebuildMS, g.Arm, how, g.DeviceMS, g.Launches, o.NodesPerSecond/1e6)
	fmt.Fprintf(tw, "device\t%s\n", g.Device)
}
