package executor

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPTXTargetCandidates(t *testing.T) {
	assert.Equal(t, []int{90, 89, 86, 80, 75, 70}, PTXTargetCandidates(90))
	assert.Equal(t, []int{86, 80, 75, 70}, PTXTargetCandidates(86))
	assert.Equal(t, []int{89, 86, 80, 75, 70}, PTXTargetCandidates(89), "duplicates removed")
	assert.Equal(t, []int{120, 89, 86, 80, 75, 70}, PTXTargetCandidates(120))
	assert.Equal(t, []int{72, 70}, PTXTargetCandidates(72))
	assert.Equal(t, []int{60}, PTXTargetCandidates(60))
	assert.Empty(t, PTXTargetCandidates(0))
}

func TestProbePTXAndSelect(t *testing.T) {
	src, err := ProbePTX(90)
	require.NoError(t, err)
	assert.Contains(t, src, ".version 8.0\n.target sm_90\n")
	assert.Contains(t, src, "atom.global.add.u32")
	assert.Contains(t, src, "bar.sync 0")
	var tried []string
	sm, err := SelectPTXTarget(90, func(p string) error {
		tried = append(tried, strings.Split(p, "\n")[1])
		if strings.Contains(p, "sm_86") {
			return nil
		}
		return errors.New("no")
	})
	require.NoError(t, err)
	assert.Equal(t, 86, sm)
	assert.Equal(t, []string{".target sm_90", ".target sm_89", ".target sm_86"}, tried)
	_, err = SelectPTXTarget(0, func(string) error { return nil })
	assert.ErrorContains(t, err, "Fix:")
}
