package main

import (
	"fmt"
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

func runVersion(e *env, args []string) error {
	f := e.newFlags("version", "version [--json]", "Print the gpuplan version and the commit it was built from.")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	v, c := buildVersion()
	if f.json {
		return writeJSON(e.stdout, map[string]string{"version": v, "commit": c})
	}
	_, err := fmt.Fprintf(e.stdout, "gpuplan %s (commit %s)\n", v, c)
	return err
}
