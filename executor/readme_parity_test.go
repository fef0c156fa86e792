package executor

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeParityTable checks that the README's parity section names
// every public item of vyre's lib.rs (testdata/vyre-lib-items.txt), each as
// code, and that it names the deliberate differences.
func TestReadmeParityTable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Parity with vyre-driver-cuda\n")
	require.True(t, ok, "the README has a parity section")
	section, _, _ = strings.Cut(section, "\n## ")
	items, err := os.ReadFile("testdata/vyre-lib-items.txt")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(items), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, name, ok := strings.Cut(line, "\t")
		require.True(t, ok, "%q", line)
		assert.Contains(t, section, "`"+name+"`", "vyre's %s %s has no row", kind, name)
		n++
	}
	assert.Equal(t, 272, n, "vyre 0.6.1's lib.rs has 272 public items")
	assert.Contains(t, section, "Deliberate differences")
}
