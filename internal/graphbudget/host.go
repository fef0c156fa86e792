package graphbudget

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// Memory is the host memory a new allocation of this process can take.
type Memory struct {
	// Bytes is the least of the bounds the system states (Host); 0 where
	// it states none.
	Bytes uint64
	// Bound names the limit that sets Bytes when it is one of the
	// process's own rather than the machine's free memory, for example
	// "the address-space limit of 4096000000 bytes (ulimit -v)"; "" when
	// Bytes is the machine's MemAvailable.
	Bound string
}

// Explain returns err with m's bound named in it (Error.Bound) when err
// is the *Error of a check against m.Bytes, as Check, CheckBuilt and
// CheckBytes return it (an error that wraps one has its message already);
// any other error unchanged.
func (m Memory) Explain(err error) error {
	if be, ok := err.(*Error); ok && m.Bound != "" && be.Bound == "" && be.Available == m.Bytes {
		be.Bound = m.Bound
	}
	return err
}

// lower returns the bound room of what bound names where it is below m's
// (or m states none). Room 0 is kept as 1 byte: known, and nothing fits.
func (m Memory) lower(room uint64, bound string) Memory {
	if m.Bytes == 0 || room < m.Bytes {
		return Memory{Bytes: max(room, 1), Bound: bound}
	}
	return m
}

// Host returns the host memory a new allocation of this process can take:
// the least of the machine's free memory (/proc/meminfo's MemAvailable),
// the room under the memory limit of the process's cgroup and of each
// cgroup above it (v1 or v2: the limit less the usage that cannot be
// reclaimed, which leaves out inactive file pages), and the room under
// the process's address-space limit (RLIMIT_AS, ulimit -v) less the
// address space it maps now. In a container MemAvailable is the host's, and
// the cgroup's limit is the one the kernel enforces by killing the process;
// under ulimit -v an allocation past the limit ends a Go program with a
// fatal error. Go maps more address space than it touches, so a graph
// within the address-space limit may still not fit under it, but one
// beyond it never does.
func Host() Memory {
	return hostMemory(os.DirFS("/"), addressSpaceLimit(), uint64(os.Getpagesize()))
}

// hostMemory is Host over a file system rooted at /, with the process's
// address-space limit in bytes (0: none) and the page size.
func hostMemory(fsys fs.FS, asLimit, pageSize uint64) Memory {
	var m Memory
	if data, err := fs.ReadFile(fsys, "proc/meminfo"); err == nil {
		m.Bytes = parseMemAvailable(data)
	}
	for _, c := range cgroupLimits(fsys) {
		m = m.lower(c.room(), fmt.Sprintf("the cgroup memory limit of %d bytes (/%s)", c.limit, c.file))
	}
	if asLimit > 0 {
		var room uint64
		if used := mappedBytes(fsys, pageSize); used < asLimit {
			room = asLimit - used
		}
		m = m.lower(room, fmt.Sprintf("the address-space limit of %d bytes (ulimit -v)", asLimit))
	}
	return m
}

// mappedBytes is the address space the process maps now: the first field
// of /proc/self/statm, in pages; 0 where the system does not say.
func mappedBytes(fsys fs.FS, pageSize uint64) uint64 {
	data, err := fs.ReadFile(fsys, "proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(data)
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil || pages > 1<<50 {
		return 0
	}
	return pages * pageSize
}

// cgroupLimit is one cgroup's memory limit: the file it is read from, the
// limit and the usage that cannot be reclaimed, in bytes.
type cgroupLimit struct {
	file         string
	limit, usage uint64
}

// room is the bytes left under the limit.
func (c cgroupLimit) room() uint64 {
	if c.usage >= c.limit {
		return 0
	}
	return c.limit - c.usage
}

// unlimited is the smallest limit taken as none: cgroup v1 writes its
// absence as the largest page-aligned int64.
const unlimited = 1 << 62

// cgroupFiles are where one cgroup hierarchy keeps a cgroup's memory limit,
// its usage, and in its memory.stat the key of its inactive file pages.
type cgroupFiles struct {
	limit, usage, inactiveKey string
}

var (
	cgroupV1 = cgroupFiles{"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"}
	cgroupV2 = cgroupFiles{"memory.max", "memory.current", "inactive_file"}
)

// cgroupLimits reads the memory limits of the process's cgroups and of
// every cgroup above them from /proc/self/cgroup and /sys/fs/cgroup: the
// v2 hierarchy (mounted at /sys/fs/cgroup, or /sys/fs/cgroup/unified
// beside v1 controllers) and the v1 memory controller. A cgroup without a
// limit, or whose files are not there, is left out.
func cgroupLimits(fsys fs.FS) []cgroupLimit {
	data, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out []cgroupLimit
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			for _, base := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				out = append(out, cgroupChain(fsys, base, parts[2], cgroupV2)...)
			}
		case hasController(parts[1], "memory"):
			out = append(out, cgroupChain(fsys, "sys/fs/cgroup/memory", parts[2], cgroupV1)...)
		}
	}
	return out
}

// hasController reports whether a comma-separated controller list holds
// name.
func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// cgroupChain reads the limit of the cgroup at dir under base and of each
// cgroup above it, up to the hierarchy's root.
func cgroupChain(fsys fs.FS, base, dir string, files cgroupFiles) []cgroupLimit {
	var out []cgroupLimit
	for d := path.Clean(dir); ; d = path.Dir(d) {
		at := path.Join(base, d)
		if c, ok := readCgroup(fsys, at, files); ok {
			out = append(out, c)
		}
		if d == "/" || d == "." {
			return out
		}
	}
}

// readCgroup reads one cgroup's limit and usage; ok is false where it has
// no limit or its files cannot be read.
func readCgroup(fsys fs.FS, dir string, files cgroupFiles) (cgroupLimit, bool) {
	limit, ok := readUint(fsys, path.Join(dir, files.limit))
	if !ok || limit >= unlimited {
		return cgroupLimit{}, false
	}
	usage, ok := readUint(fsys, path.Join(dir, files.usage))
	if !ok {
		return cgroupLimit{}, false
	}
	if stat, err := fs.ReadFile(fsys, path.Join(dir, "memory.stat")); err == nil {
		usage -= min(usage, statValue(stat, files.inactiveKey))
	}
	return cgroupLimit{file: path.Join(dir, files.limit), limit: limit, usage: usage}, true
}

// readUint reads a file holding one decimal number; "max" (cgroup v2's
// no limit) and anything else are not one.
func readUint(fsys fs.FS, name string) (uint64, bool) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(data)), 10, 64)
	return v, err == nil
}

// statValue reads "key N" from a memory.stat text; 0 where it is missing.
func statValue(data []byte, key string) uint64 {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 2 && string(f[0]) == key {
			if v, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
				return v
			}
		}
	}
	return 0
}
