package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion reports the module version and VCS revision embedded by the
// Go toolchain, or "devel" when they are unknown.
func buildVersion() (version, commit string) {
	version, commit = "devel", "unknown"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		version = v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			commit = s.Value
		}
	}
	return
}

// versionInfo is the JSON form of gpuplan version.
type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// CUDA is set for a build with -tags cuda, which runs the GPU
	// commands (bench, devices --probe); without it gpuplan plans offline.
	CUDA bool   `json:"cuda"`
	Go   string `json:"go"`
}

const versionAbout = `Print the gpuplan version, the commit it was built from, and whether the
build has CUDA support (make build-cuda): only a CUDA build runs the GPU
commands (bench, devices --probe); every build plans offline.
'gpuplan --version' is the same as 'gpuplan version'.`

func runVersion(e *env, args []string) error {
	f := e.newFlags("version", "version [--json]", versionAbout)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	v, c := buildVersion()
	info := versionInfo{Version: v, Commit: c, CUDA: buildHasCUDA, Go: runtime.Version()}
	if f.json {
		return writeJSON(e.stdout, info)
	}
	cuda := "without CUDA (plans offline; GPU commands need 'make build-cuda')"
	if info.CUDA {
		cuda = "with CUDA"
	}
	_, err := fmt.Fprintf(e.stdout, "gpuplan %s (commit %s, %s), built %s\n", v, c, info.Go, cuda)
	return err
}
