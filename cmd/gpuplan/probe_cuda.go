//go:build cuda

package main

import (
	"fmt"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
)

// probeReport is the JSON form of `gpuplan devices --probe`.
type probeReport struct {
	Live            occupancy.Device      `json:"live"`
	PTXTarget       int                   `json:"ptx_target"`
	FreeMemoryBytes uint64                `json:"free_memory_bytes"`
	Closest         string                `json:"closest"`
	Profile         occupancy.Device      `json:"profile"`
	Diff            []occupancy.FieldDiff `json:"diff"`
}

// probeLiveDevice opens CUDA device 0, probes its capabilities and prints
// them next to the closest built-in profile, marking every field that
// differs. Without the driver library it returns cudalib's one-sentence
// error, and without a GPU the executor's.
func probeLiveDevice(e *env, jsonOut bool) error {
	if err := driverLibraryError(); err != nil {
		return err
	}
	x, err := executor.Open(0, executor.Options{})
	if err != nil {
		return err
	}
	live := x.Device()
	free, _, merr := x.MemInfo()
	target := x.PTXTarget()
	if err := x.Close(); err != nil {
		return err
	}
	if merr != nil {
		return merr
	}
	p := occupancy.Closest(live)
	rep := probeReport{Live: live, PTXTarget: target, FreeMemoryBytes: free, Closest: p.Short, Profile: p.Device,
		Diff: occupancy.Diff(live, p.Device)}
	if rep.Diff == nil {
		rep.Diff = []occupancy.FieldDiff{}
	}
	if jsonOut {
		return writeJSON(e.stdout, rep)
	}
	fmt.Fprintf(e.stdout, "live device %d: %s (PTX target sm_%d, %d bytes free)\n", live.Ordinal, live.Name, target, free)
	fmt.Fprintf(e.stdout, "closest built-in profile: %s (%d fields differ)\n\n", p.Short, len(rep.Diff))
	differs := map[string]bool{}
	for _, d := range rep.Diff {
		differs[d.Field] = true
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FIELD\tLIVE\t%s\t\n", strings.ToUpper(p.Short))
	lv, pv := reflect.ValueOf(live), reflect.ValueOf(p.Device)
	for i := range lv.NumField() {
		name, _, _ := strings.Cut(lv.Type().Field(i).Tag.Get("json"), ",")
		mark := ""
		if differs[name] {
			mark = "<- differs"
		}
		fmt.Fprintf(tw, "%s\t%v\t%v\t%s\n", name, lv.Field(i).Interface(), pv.Field(i).Interface(), mark)
	}
	return tw.Flush()
}
