package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpuplan/gpuplan/evidence"
)

// writeFileAtomic writes data to path whole: to a temporary file beside it,
// renamed into place, so that a reader of the folder never sees half of it.
// A path that is a directory is refused before anything is written.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicFrom(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeFileAtomicFrom is writeFileAtomic of what write writes, streamed to
// the temporary file rather than held in memory whole.
func writeFileAtomicFrom(path string, write func(io.Writer) error) error {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("writing %s: it is a directory. Fix: name a file to write, for example %s", echoName(path), echoName(filepath.Join(path, "out")))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return writeError(path, err, "check that the directory exists and is writable")
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if err := write(tmp); err != nil {
		tmp.Close()
		return writeError(path, err, "check the free space of its file system")
	}
	if err := tmp.Close(); err != nil {
		return writeError(path, err, "check the free space of its file system")
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return writeError(path, err, "check the directory's permissions")
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return writeError(path, err, "check that "+echoName(path)+" is not a directory")
	}
	return nil
}

// checkOutputFile refuses an output path that is a directory, before the
// command does the work whose result it would write there.
func checkOutputFile(command, flag, path string) error {
	if info, err := os.Stat(path); path != "" && path != "-" && err == nil && info.IsDir() {
		return usagef("gpuplan %s: %s %s is a directory. Fix: name a file to write, for example %s", command, flag, echoName(path), echoName(filepath.Join(path, "out")))
	}
	return nil
}

// writeError is the failure to write path: the path as a message repeats
// it (echoName), the operating system's reason without the paths it
// repeats raw (osReason), and fix.
func writeError(path string, err error, fix string) error {
	return fmt.Errorf("writing %s: %v. Fix: %s", echoName(path), osReason(err), fix)
}

// osReason returns the reason of a file-system error without the path it
// names: a *fs.PathError or *os.LinkError repeats the path raw, control
// characters and all, while the caller names it quoted and cut.
func osReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

// writeEvidenceFile writes evidence rows to path in gpuplan's evidence CSV
// format.
func writeEvidenceFile(path string, rows []evidence.Sample) error {
	var buf bytes.Buffer
	if err := evidence.WriteSamples(&buf, rows); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}
