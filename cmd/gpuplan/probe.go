package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/occupancy"
)

// probeSchema names the version of the report `gpuplan devices --probe
// --json` writes. A change that an older reader would misread gets a new
// version.
const probeSchema = "gpuplan.device-probe/v1"

// probedGPU is what the driver reports about one GPU: the records the
// CUDA build's probe gathers (probe_cuda.go) and the report is built from.
type probedGPU struct {
	Ordinal         int
	UUID            [16]byte
	PCIBusID        string
	Device          occupancy.Device
	PTXTarget       int
	FreeMemoryBytes uint64
}

// probeResult is the whole machine as the driver reports it.
type probeResult struct {
	// DriverVersion is cuDriverGetVersion's 1000*major + 10*minor;
	// KernelModule the NVIDIA kernel module's version ("580.159.04"), ""
	// when the machine does not say.
	DriverVersion int
	KernelModule  string
	GPUs          []probedGPU
}

// probeReport is the JSON form of `gpuplan devices --probe`.
type probeReport struct {
	Schema string `json:"schema"`
	// DriverVersion is the CUDA version the driver supports ("12.2"), and
	// DriverVersionNumber cuDriverGetVersion's number for it (12020).
	DriverVersion       string `json:"driver_version"`
	DriverVersionNumber int    `json:"driver_version_number"`
	// KernelModule is the NVIDIA kernel module's version, as nvidia-smi
	// and the evidence files' driver_version column give it.
	KernelModule string     `json:"kernel_module,omitempty"`
	GPUs         []probeGPU `json:"gpus"`
	// ProfileFile is the file -o wrote, and ProfileOrdinal the GPU in it.
	ProfileFile    string `json:"profile_file,omitempty"`
	ProfileOrdinal *int   `json:"profile_ordinal,omitempty"`
}

// probeGPU is one GPU of the report. Profile is its device profile
// document (the file -o writes), with the closest built-in profile and the
// fields that differ from it.
type probeGPU struct {
	Ordinal           int                       `json:"ordinal"`
	Name              string                    `json:"name"`
	UUID              string                    `json:"uuid"`
	PCIBusID          string                    `json:"pci_bus_id"`
	ComputeCapability string                    `json:"compute_capability"`
	TotalMemoryBytes  int64                     `json:"total_memory_bytes"`
	FreeMemoryBytes   uint64                    `json:"free_memory_bytes"`
	PTXTarget         int                       `json:"ptx_target"`
	Profile           occupancy.ProfileDocument `json:"profile"`
}

// probeOptions are the flags of `gpuplan devices --probe`.
type probeOptions struct {
	json bool
	// out is the profile file to write (-o); ordinal the GPU it describes.
	out     string
	ordinal int
}

// formatGPUUUID formats a device UUID as nvidia-smi prints it:
// GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in lower-case hexadecimal.
func formatGPUUUID(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return "GPU-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// formatDriverVersion turns cuDriverGetVersion's number (12020) into the
// CUDA version it stands for ("12.2").
func formatDriverVersion(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// liveProfile is the device profile document of one probed GPU. Its
// device has ordinal 0, as every profile does: the ordinal says where the
// GPU sits in this machine, not what it is.
func liveProfile(g probedGPU) occupancy.ProfileDocument {
	d := g.Device
	d.Ordinal = 0
	return occupancy.NewProfileDocument(fmt.Sprintf("gpuplan devices --probe: GPU %d, %s", g.Ordinal, formatGPUUUID(g.UUID)), d, true)
}

// buildProbeReport builds the report of a probe, GPUs in ordinal order as
// the driver listed them.
func buildProbeReport(r probeResult) probeReport {
	rep := probeReport{Schema: probeSchema, DriverVersion: formatDriverVersion(r.DriverVersion),
		DriverVersionNumber: r.DriverVersion, KernelModule: r.KernelModule, GPUs: make([]probeGPU, len(r.GPUs))}
	for i, g := range r.GPUs {
		rep.GPUs[i] = probeGPU{Ordinal: g.Ordinal, Name: g.Device.Name, UUID: formatGPUUUID(g.UUID), PCIBusID: g.PCIBusID,
			ComputeCapability: g.Device.CC(), TotalMemoryBytes: g.Device.TotalMemoryBytes, FreeMemoryBytes: g.FreeMemoryBytes,
			PTXTarget: g.PTXTarget, Profile: liveProfile(g)}
	}
	return rep
}

// profileOf returns the profile document of GPU ordinal, or an error
// naming --ordinal and the ordinals the machine has.
func (rep probeReport) profileOf(ordinal int) (occupancy.ProfileDocument, error) {
	for _, g := range rep.GPUs {
		if g.Ordinal == ordinal {
			return g.Profile, nil
		}
	}
	return occupancy.ProfileDocument{}, fmt.Errorf("--ordinal %d: this machine has %d GPU(s), ordinals 0 to %d. Fix: pick one of the ordinals 'gpuplan devices --probe' lists",
		ordinal, len(rep.GPUs), len(rep.GPUs)-1)
}

// writeProfileFile writes doc to path as `gpuplan devices --json` writes a
// profile, after checking that --device-file reads it back as the same
// device, so a probe never leaves a file the planning commands refuse.
func writeProfileFile(path string, doc occupancy.ProfileDocument) error {
	var b strings.Builder
	if err := writeJSON(&b, doc); err != nil {
		return err
	}
	back, err := occupancy.LoadDeviceJSON(path, []byte(b.String()))
	if err != nil {
		return fmt.Errorf("-o %s: the probed profile does not pass the profile checks (%v). Fix: save the report with --json and edit the device by hand", quote.Text(path), err)
	}
	if len(occupancy.Diff(back, doc.Device)) != 0 {
		return fmt.Errorf("-o %s: the probed profile does not read back as the same device. Fix: save the report with --json and edit the device by hand", quote.Text(path))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("-o: %w", writeError(path, err, "check that the folder exists and is writable"))
	}
	return nil
}

// runProbe builds the report of a probe, writes the profile -o asks for,
// and prints the report as text or JSON.
func runProbe(e *env, o probeOptions, r probeResult) error {
	if len(r.GPUs) == 0 {
		return fmt.Errorf("the CUDA driver lists no GPU. Fix: check nvidia-smi and the device nodes (/dev/nvidia*)")
	}
	rep := buildProbeReport(r)
	if o.out != "" {
		doc, err := rep.profileOf(o.ordinal)
		if err != nil {
			return err
		}
		if err := writeProfileFile(o.out, doc); err != nil {
			return err
		}
		rep.ProfileFile, rep.ProfileOrdinal = o.out, &o.ordinal
	}
	if o.json {
		return writeJSON(e.stdout, rep)
	}
	return writeProbeText(e.stdout, rep)
}

// writeProbeText prints the report: the driver once, then each GPU's
// identity, memory and closest built-in profile with the fields that
// differ from it.
func writeProbeText(w io.Writer, rep probeReport) error {
	module := ""
	if rep.KernelModule != "" {
		module = "NVIDIA " + rep.KernelModule + ", "
	}
	fmt.Fprintf(w, "driver: %sCUDA %s (cuDriverGetVersion %d), %d GPU(s)\n", module, rep.DriverVersion, rep.DriverVersionNumber, len(rep.GPUs))
	for _, g := range rep.GPUs {
		if err := writeProbeGPU(w, g); err != nil {
			return err
		}
	}
	if rep.ProfileFile != "" {
		fmt.Fprintf(w, "\nwrote GPU %d's profile to %s (read it with --device-file %s)\n", *rep.ProfileOrdinal, quote.Text(rep.ProfileFile), quote.Text(rep.ProfileFile))
	}
	return nil
}

// writeProbeGPU prints one GPU of the report.
func writeProbeGPU(w io.Writer, g probeGPU) error {
	fmt.Fprintf(w, "\nGPU %d: %s\n", g.Ordinal, quote.Text(g.Name))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  uuid\t%s\n", g.UUID)
	fmt.Fprintf(tw, "  PCI bus id\t%s\n", quote.Text(g.PCIBusID))
	fmt.Fprintf(tw, "  compute capability\t%s (PTX target sm_%d)\n", g.ComputeCapability, g.PTXTarget)
	fmt.Fprintf(tw, "  memory\t%s total, %s free\n", gib(uint64(max(g.TotalMemoryBytes, 0))), gib(g.FreeMemoryBytes))
	fmt.Fprintf(tw, "  SMs\t%d\n", g.Profile.Device.SMCount)
	closest := fmt.Sprintf("%s (identical)", g.Profile.Closest)
	if n := len(g.Profile.DiffFromClosest); n > 0 {
		closest = fmt.Sprintf("%s (%d fields differ)", g.Profile.Closest, n)
	}
	fmt.Fprintf(tw, "  closest built-in profile\t%s\n", closest)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(g.Profile.DiffFromClosest) == 0 {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "    FIELD\t%s\tLIVE\n", strings.ToUpper(g.Profile.Closest))
	for _, fd := range g.Profile.DiffFromClosest {
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", fd.Field, quote.Text(fd.A), quote.Text(fd.B))
	}
	return tw.Flush()
}

// gib formats a byte count as GiB with the exact bytes beside it.
func gib(b uint64) string {
	return fmt.Sprintf("%.1f GiB (%d B)", float64(b)/(1<<30), b)
}
