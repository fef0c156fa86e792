package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeExample is a "$ gpuplan ..." line of a fenced block of README.md
// and the output shown under it.
type readmeExample struct {
	line    int
	command string
	want    []string
}

// readmeLines returns README.md's shell command lines (every line of a
// ```sh block, and the "$ " lines of other blocks) by line number, and the
// examples: the "$ " lines with the output shown under them.
func readmeLines(t *testing.T, path string) (shell map[int]string, examples []readmeExample) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	shell = map[int]string{}
	in, sh := false, false
	var cur *readmeExample
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			in, sh, cur = !in, line == "```sh", nil
			continue
		}
		switch {
		case !in:
		case sh:
			shell[n] = line
		case strings.HasPrefix(line, "$ "):
			shell[n] = strings.TrimPrefix(line, "$ ")
			examples = append(examples, readmeExample{line: n, command: shell[n]})
			cur = &examples[len(examples)-1]
		case cur != nil:
			cur.want = append(cur.want, strings.TrimRight(line, " "))
		}
	}
	require.NoError(t, sc.Err())
	for i := range examples {
		w := examples[i].want
		for len(w) > 0 && w[len(w)-1] == "" {
			w = w[:len(w)-1]
		}
		examples[i].want = w
	}
	return shell, examples
}

// runPipeline runs "gpuplan ARGS [| gpuplan ARGS]... [| tail -N | head -N]"
// in-process and returns the last stage's standard output.
func runPipeline(t *testing.T, command string) string {
	out := ""
	for i, stage := range strings.Split(command, " | ") {
		require.NotContains(t, stage, `"`, "README examples use no shell quoting: %s", command)
		args := strings.Fields(stage)
		switch {
		case args[0] == "gpuplan":
			var stdout, stderr bytes.Buffer
			runWithInput(&stdout, &stderr, strings.NewReader(out), args[1:])
			out = stdout.String()
		case i > 0 && len(args) == 2 && (args[0] == "tail" || args[0] == "head") && strings.HasPrefix(args[1], "-"):
			n, err := strconv.Atoi(args[1][1:])
			require.NoError(t, err, command)
			lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
			if args[0] == "tail" {
				lines = lines[max(0, len(lines)-n):]
			} else {
				lines = lines[:min(n, len(lines))]
			}
			out = strings.Join(lines, "") + "\n"
		default:
			t.Fatalf("README example %q: stage %q is not gpuplan, tail -N or head -N", command, stage)
		}
	}
	return out
}

// matchLines reports whether got matches want, where a line "..." (after
// trimming) in want stands for any number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchLines(want[1:], got[1:])
}

// Every "$ gpuplan ..." example of the README prints exactly what the
// README shows under it, so the README cannot drift from the tool.
func TestReadmeExamples(t *testing.T) {
	_, examples := readmeLines(t, "../../README.md")
	require.GreaterOrEqual(t, len(examples), 7, "the README's examples were not found")
	t.Chdir("../..")
	for _, ex := range examples {
		t.Run(fmt.Sprintf("line %d", ex.line), func(t *testing.T) {
			got := strings.Split(strings.TrimRight(runPipeline(t, ex.command), "\n"), "\n")
			for i := range got {
				got[i] = strings.TrimRight(got[i], " ")
			}
			if !matchLines(ex.want, got) {
				t.Errorf("README.md:%d: $ %s\nthe README shows:\n%s\n\ngpuplan prints:\n%s", ex.line, ex.command,
					strings.Join(ex.want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

func TestMatchLines(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb", true},
		{"a\nb", "a\nc", false},
		{"a\n...\nd", "a\nb\nc\nd", true},
		{"a\n  ...\nd", "a\nd", true},
		{"a\n...", "a", true},
		{"a\n...\nd", "a\nb\nc", false},
		{"a", "a\nb", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.ok, matchLines(strings.Split(tc.want, "\n"), strings.Split(tc.got, "\n")), "%q vs %q", tc.want, tc.got)
	}
}

// outputFlag finds the files a command line writes: the values of gpuplan's
// output flags and shell redirections.
var outputFlag = regexp.MustCompile(`(?:--chart|--output|--markdown|--metrics|-o|>|tee)[ =](\S+)`)

// No command the README shows writes into the tracked tree: what a
// command writes goes under a folder .gitignore ignores (or outside the
// checkout), so following the README never stamps the next build +dirty.
func TestReadmeCommandsWriteOnlyIgnoredPaths(t *testing.T) {
	shell, _ := readmeLines(t, "../../README.md")
	ignore, err := os.ReadFile("../../.gitignore")
	require.NoError(t, err)
	var ignoredDirs []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if strings.HasPrefix(l, "/") && strings.HasSuffix(l, "/") {
			ignoredDirs = append(ignoredDirs, strings.Trim(l, "/")+"/")
		}
	}
	require.Contains(t, ignoredDirs, "out/")
	checked := 0
	for n, line := range shell {
		line, _, _ = strings.Cut(line, "#") // a comment writes nothing
		for _, m := range outputFlag.FindAllStringSubmatch(line, -1) {
			path := m[1]
			if filepath.IsAbs(path) || strings.HasPrefix(path, "$") || path == "-" {
				continue
			}
			checked++
			ok := false
			for _, d := range ignoredDirs {
				ok = ok || strings.HasPrefix(path, d)
			}
			assert.True(t, ok, "README.md:%d writes %s, a tracked path: write under one of %v instead", n, path, ignoredDirs)
		}
	}
	assert.Positive(t, checked, "no output path found: the README's report command was not seen")
}
