package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/occupancy"
)

// deviceFlags selects a device by built-in name or custom JSON profile; it
// is shared by the occupancy and diagnose subcommands.
type deviceFlags struct {
	name string
	file string
	// defaulted are the optional fields the --device-file profile left
	// out, set by resolve.
	defaulted []occupancy.DefaultedField
}

func (df *deviceFlags) add(f *flags) {
	f.StringVar(&df.name, "device", "", "built-in device profile (see 'gpuplan devices'), for example h100-sxm or h200")
	f.StringVar(&df.file, "device-file", "", "custom device profile as a JSON file (\"-\" reads standard input)")
	f.readsInput()
}

// resolve returns the selected device and a short label for it. Selecting
// none or both is a usage error, and so is an unknown name (the message
// lists the known names).
func (df *deviceFlags) resolve(e *env, cmd string) (occupancy.Device, string, error) {
	switch {
	case df.name != "" && df.file != "":
		return occupancy.Device{}, "", usagef("gpuplan %s: give either --device or --device-file, not both. Fix: drop one of the two flags (see 'gpuplan %s --help')", cmd, cmd)
	case df.name == "" && df.file == "":
		return occupancy.Device{}, "", usagef("gpuplan %s: missing --device NAME or --device-file FILE; known devices: %s. Fix: add --device with a known name or --device-file with a profile JSON (see 'gpuplan %s --help')",
			cmd, strings.Join(occupancy.ProfileNames(), ", "), cmd)
	case df.file != "":
		d, source, defaulted, err := loadDeviceFile(e, df.file)
		df.defaulted = defaulted
		return d, source, err
	}
	p, err := lookupProfile(df.name, "use one of the known names or load a custom profile with --device-file")
	if err != nil {
		return occupancy.Device{}, "", usagef("gpuplan %s: --device: %v", cmd, err)
	}
	return p.Device, p.Short, nil
}

// lookupProfile is occupancy.LookupProfile, except that the refusal of an
// unknown name repeats the name as every message repeats an input (quoted,
// escaped and cut to quote.MaxEcho bytes: a name can be a megabyte) and
// ends with fix, which names what the caller takes instead of a built-in
// name (--device-file, a workload's device_file, --device-memory).
func lookupProfile(name, fix string) (occupancy.Profile, error) {
	p, err := occupancy.LookupProfile(name)
	var unknown *occupancy.UnknownDeviceError
	if errors.As(err, &unknown) {
		return p, fmt.Errorf("unknown device %s; known devices: %s. Fix: %s", quote.Echo(unknown.Name), strings.Join(unknown.Known, ", "), fix)
	}
	return p, err
}

// loadDeviceFile reads and decodes a device profile file and returns it
// with the input's name ("<stdin>" for -) and the optional fields it left
// out.
func loadDeviceFile(e *env, path string) (occupancy.Device, string, []occupancy.DefaultedField, error) {
	data, source, err := e.readInput(path)
	if err != nil {
		return occupancy.Device{}, "", nil, err
	}
	d, defaulted, err := occupancy.LoadDeviceJSONDefaults(source, data)
	return d, source, defaulted, err
}

// deviceRow is one device in the devices listing (JSON form).
type deviceRow struct {
	Short                string           `json:"short,omitempty"`
	Aliases              []string         `json:"aliases,omitempty"`
	Note                 string           `json:"note,omitempty"`
	Synthetic            bool             `json:"synthetic,omitempty"`
	BandwidthBytesPerSec int64            `json:"bandwidth_bytes_per_sec"`
	Device               occupancy.Device `json:"device"`
}

const devicesAbout = `
List the built-in GPU device profiles: compute capability, SM count, the
occupancy limits per SM, L2, memory and a bandwidth estimate
(2 x memory clock x bus width). Profiles use NVIDIA's published numbers and
the per-architecture limits of the CUDA occupancy calculator; "rtx5090" is
vyre's synthetic RTX 5090 profile (kept for parity), "rtx5090-sm120" the
CUDA sm_120 limits.

With --device NAME or --device-file FILE, show every field of one profile
(a custom file is checked strictly, the optional fields it leaves out are
listed with the defaults they got, and it is compared with its closest
built-in profile). With --json, one profile is written as a versioned profile
document ("schema": "gpuplan.device-profile/v1") that --device-file, and a
workload's device_file, read back: save it, edit it, plan against it.
With --probe, read every live GPU (needs a CUDA build): the driver
version, then each GPU's ordinal, name, UUID, PCI bus id, compute
capability and memory, and the closest built-in profile with the fields
that differ. --json writes the report as "schema":
"gpuplan.device-probe/v1", each GPU's profile document under "profile".
-o FILE writes the profile of GPU --ordinal (default 0) as a profile
document that --device-file reads.

Examples:
  gpuplan devices
  gpuplan devices --device h200
  gpuplan devices --device h200 --json > mygpu.json
  gpuplan devices --device h200 --json | gpuplan devices --device-file -
  gpuplan occupancy --device-file mygpu.json --regs 64 --block 256
  gpuplan devices --probe -o live.json --ordinal 1
`

func runDevices(e *env, args []string) error {
	f := e.newFlags("devices", "devices [--device NAME | --device-file FILE | --probe [-o FILE [--ordinal N]]] [--json]", devicesAbout)
	var df deviceFlags
	df.add(f)
	probe := f.Bool("probe", false, "read every live GPU's properties and compare each with the closest built-in profile (needs 'make build-cuda')")
	var po probeOptions
	f.StringVar(&po.out, "o", "", "with --probe, write the profile of the GPU --ordinal names to `FILE`, for --device-file")
	f.IntVar(&po.ordinal, "ordinal", 0, "with --probe -o, the ordinal `N` of the GPU whose profile is written, as --probe lists it")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	if err := checkProbeFlags(*probe, df, setFlags(f), po); err != nil {
		return err
	}
	if *probe {
		po.json = f.json
		return probeDevices(e, po)
	}
	if df.name != "" || df.file != "" {
		d, label, err := df.resolve(e, "devices")
		if err != nil {
			return err
		}
		return showDevice(e, f.json, d, label, df.file != "", df.defaulted)
	}
	ps := occupancy.Profiles()
	if f.json {
		rows := make([]deviceRow, len(ps))
		for i, p := range ps {
			rows[i] = deviceRow{Short: p.Short, Aliases: p.Aliases, Note: p.Note, Synthetic: p.Synthetic,
				BandwidthBytesPerSec: p.Device.BandwidthBytesPerSec(), Device: p.Device}
		}
		return writeJSON(e.stdout, rows)
	}
	shortW, nameW := len("SHORT"), len("NAME")
	for _, p := range ps {
		shortW = max(shortW, len(p.Short)+2)
		nameW = max(nameW, len(p.Device.Name))
	}
	fmt.Fprintf(e.stdout, "%-*s  %-*s  %4s  %4s  %10s  %9s  %11s  %10s  %6s  %10s  %8s  %7s\n", shortW, "SHORT", nameW, "NAME",
		"CC", "SMS", "THREADS/SM", "BLOCKS/SM", "SMEM/SM KiB", "OPT-IN KiB", "L2 MiB", "MEMORY GiB", "BUS BITS", "BW GB/s")
	for _, p := range ps {
		d := p.Device
		short := p.Short
		if p.Note != "" {
			short += " *"
		}
		fmt.Fprintf(e.stdout, "%-*s  %-*s  %4s  %4d  %10d  %9d  %11d  %10d  %6d  %10.1f  %8d  %7d\n", shortW, short, nameW, d.Name,
			d.CC(), d.SMCount, d.MaxThreadsPerSM, d.MaxBlocksPerSM, d.SharedMemPerSM/1024, d.SharedMemPerBlockOptIn/1024,
			d.L2Bytes>>20, float64(d.TotalMemoryBytes)/(1<<30), d.MemoryBusBits, d.BandwidthBytesPerSec()/1e9)
	}
	fmt.Fprintln(e.stdout, "\nAll profiles: warp 32, 1024 threads per block, 65,536 registers per SM and per block, 255 per thread.")
	fmt.Fprintln(e.stdout, "BW is 2 x memory clock x bus width. Profiles marked * have notes:")
	for _, p := range ps {
		if p.Note != "" {
			fmt.Fprintf(e.stdout, "  %s: %s\n", p.Short, p.Note)
		}
	}
	return nil
}

// checkProbeFlags refuses --probe with a profile selection, -o or
// --ordinal without --probe, --ordinal without -o, and a negative ordinal.
func checkProbeFlags(probe bool, df deviceFlags, set map[string]bool, po probeOptions) error {
	switch {
	case probe && (df.name != "" || df.file != ""):
		return usagef("gpuplan devices: --probe cannot be combined with --device or --device-file. Fix: drop --probe, or drop --device and --device-file")
	case !probe && (set["o"] || set["ordinal"]):
		return usagef("gpuplan devices: -o and --ordinal write a probed GPU's profile and need --probe. Fix: add --probe, or save a built-in profile with --device NAME --json > FILE")
	case set["ordinal"] && !set["o"]:
		return usagef("gpuplan devices: --ordinal names the GPU whose profile -o writes (--probe lists every GPU). Fix: add -o FILE, or drop --ordinal")
	case set["o"] && po.out == "":
		return usagef("gpuplan devices: -o needs a file name. Fix: give -o FILE")
	case po.ordinal < 0:
		return usagef("gpuplan devices: --ordinal %d is negative. Fix: give a GPU ordinal from 'gpuplan devices --probe' (0 is the first)", po.ordinal)
	}
	return nil
}

// probeDevices reads every live GPU (CUDA build) and prints the report,
// writing the profile -o asks for.
func probeDevices(e *env, o probeOptions) error {
	r, err := probeMachine()
	if err != nil {
		return err
	}
	return runProbe(e, o, r)
}

// showDevice prints one device: its fields as a table, or with --json its
// profile document (occupancy.ProfileDocument), which --device-file reads
// back. The table of a custom profile lists the fields it left out with
// the defaults they got (defaulted), and compares it with its closest
// built-in profile.
func showDevice(e *env, jsonOut bool, d occupancy.Device, label string, custom bool, defaulted []occupancy.DefaultedField) error {
	out := occupancy.NewProfileDocument(label, d, custom)
	if jsonOut {
		return writeJSON(e.stdout, out)
	}
	writeDeviceFields(e.stdout, label, d)
	if len(defaulted) > 0 {
		fmt.Fprintf(e.stdout, "\ndefaults of the %d fields the profile leaves out:\n", len(defaulted))
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		for _, f := range defaulted {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Field, f.Value, f.Meaning)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if custom {
		fmt.Fprintf(e.stdout, "\nclosest built-in profile: %s", out.Closest)
		if len(out.DiffFromClosest) == 0 {
			fmt.Fprintln(e.stdout, " (identical)")
			return nil
		}
		fmt.Fprintf(e.stdout, " (%d fields differ)\n", len(out.DiffFromClosest))
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  FIELD\t%s\t%s\n", out.Closest, quote.Text(label))
		for _, fd := range out.DiffFromClosest {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", fd.Field, quote.Text(fd.A), quote.Text(fd.B))
		}
		return tw.Flush()
	}
	return nil
}

func writeDeviceFields(w io.Writer, label string, d occupancy.Device) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k string, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...)
	}
	row("source", "%s", quote.Text(label))
	row("name", "%s", quote.Text(d.Name))
	row("compute capability", "%s", d.CC())
	row("SMs", "%d", d.SMCount)
	row("warp size", "%d", d.WarpSize)
	row("threads per block / SM", "%d / %d", d.MaxThreadsPerBlock, d.MaxThreadsPerSM)
	row("blocks per SM", "%d", d.MaxBlocksPerSM)
	row("registers per SM / block / thread", "%d / %d / %d", d.RegistersPerSM, d.RegistersPerBlock, d.RegistersPerThread)
	row("register unit, sub-partitions", "%d per warp, %d", d.RegisterAllocUnit, d.SubPartitions)
	row("shared memory per SM", "%d B", d.SharedMemPerSM)
	row("shared memory per block", "%d B default, %d B opt-in", d.SharedMemPerBlock, d.SharedMemPerBlockOptIn)
	row("shared memory reserved, granularity", "%d B per block, %d B", d.ReservedSharedMemPerBlk, d.SharedMemAllocUnit)
	row("carveouts (KiB)", "%s", carveouts(d.SharedMemCarveoutsKiB))
	row("L2", "%d B", d.L2Bytes)
	row("memory", "%d B", d.TotalMemoryBytes)
	row("memory bus, clock", "%d bits, %d kHz", d.MemoryBusBits, d.MemoryClockKHz)
	if bw := d.BandwidthBytesPerSec(); bw > 0 {
		row("bandwidth estimate", "%.1f GB/s", float64(bw)/1e9)
	} else {
		row("bandwidth estimate", "unknown (memory bus width or clock is 0)")
	}
	row("cooperative launch, concurrent kernels", "%t, %t", d.CooperativeLaunch, d.ConcurrentKernels)
	row("async engines", "%d", d.AsyncEngines)
	row("max grid", "%v", d.MaxGridDim)
	row("max block", "%v", d.MaxBlockDim)
	tw.Flush()
}

func carveouts(c []int) string {
	if len(c) == 0 {
		return "none (the whole per-SM shared memory)"
	}
	s := make([]string, len(c))
	for i, v := range c {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}
