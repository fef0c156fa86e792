package kernelabi

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

var (
	entryRE = regexp.MustCompile(`\.visible\s+\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\(([^)]*)\)`)
	paramRE = regexp.MustCompile(`\.param\s+\.(\w+)`)
)

// CheckPTX checks a compiled module against the ABI: every declared kernel
// is an entry of the PTX with exactly as many parameters as its struct has
// fields, each 8 bytes wide (.u64), and the PTX has no entry the ABI does
// not declare.
func (m Module) CheckPTX(ptx []byte) error {
	entries := map[string][]string{}
	for _, e := range entryRE.FindAllSubmatch(ptx, -1) {
		var kinds []string
		for _, p := range paramRE.FindAllSubmatch(e[2], -1) {
			kinds = append(kinds, string(p[1]))
		}
		entries[string(e[1])] = kinds
	}
	var errs []string
	for _, k := range m.Kernels {
		ps, err := params(k.Params)
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		kinds, ok := entries[k.Name]
		if !ok {
			errs = append(errs, fmt.Sprintf("kernel %s is declared in Go but is not an entry of the PTX", k.Name))
			continue
		}
		delete(entries, k.Name)
		if len(kinds) != len(ps) {
			errs = append(errs, fmt.Sprintf("kernel %s takes %d parameters in the PTX, %d in the Go ABI", k.Name, len(kinds), len(ps)))
		}
		for i, kd := range kinds {
			if kd != "u64" && kd != "b64" {
				errs = append(errs, fmt.Sprintf("kernel %s parameter %d is .%s in the PTX, not 8 bytes", k.Name, i, kd))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		errs = append(errs, fmt.Sprintf("PTX entry %s is not declared in the Go ABI", name))
	}
	if len(errs) > 0 {
		return fmt.Errorf("module %s: %s. Fix: declare the kernels once in Go, regenerate the header (go generate) and the PTX (make ptx)", m.Name, strings.Join(errs, "; "))
	}
	return nil
}
